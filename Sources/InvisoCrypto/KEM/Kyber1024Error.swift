/// Why a ``Kyber1024`` operation was refused.
///
/// The cases say which input or step failed, never why in detail: a rejected key or
/// ciphertext is reported only by its role, and no description contains key material.
/// Decapsulating a well-formed but wrong or tampered ciphertext is *not* an error (the KEM
/// answers with an unrelated pseudorandom secret instead), so ``decapsulationFailed`` means
/// the backend itself failed.
public struct Kyber1024Error: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case invalidPublicKey
        case invalidPrivateKey
        case invalidCiphertext
        case keyGenerationFailed
        case encapsulationFailed
        case decapsulationFailed
    }

    private let code: Code

    private init(_ code: Code) {
        self.code = code
    }

    /// The public key is not 1,568 bytes, or its coefficients are not all reduced modulo q
    /// (the ML-KEM import check).
    public static let invalidPublicKey = Kyber1024Error(.invalidPublicKey)
    /// The private-key seed is not the 64 bytes d ‖ z, or the backend refused it.
    public static let invalidPrivateKey = Kyber1024Error(.invalidPrivateKey)
    /// The ciphertext is not 1,568 bytes.
    public static let invalidCiphertext = Kyber1024Error(.invalidCiphertext)
    /// The backend could not generate a fresh key pair (for example, no randomness).
    public static let keyGenerationFailed = Kyber1024Error(.keyGenerationFailed)
    /// The backend could not encapsulate to the public key.
    public static let encapsulationFailed = Kyber1024Error(.encapsulationFailed)
    /// The backend failed to decapsulate a ciphertext of the right length.
    public static let decapsulationFailed = Kyber1024Error(.decapsulationFailed)

    /// A short explanation, free of key material.
    public var description: String {
        switch code {
        case .invalidPublicKey: "Kyber1024Error: the public key must be a valid 1568-byte key"
        case .invalidPrivateKey: "Kyber1024Error: the private-key seed must be a valid 64-byte d || z"
        case .invalidCiphertext: "Kyber1024Error: the ciphertext must be 1568 bytes"
        case .keyGenerationFailed: "Kyber1024Error: key generation failed"
        case .encapsulationFailed: "Kyber1024Error: encapsulation failed"
        case .decapsulationFailed: "Kyber1024Error: decapsulation failed"
        }
    }
}
