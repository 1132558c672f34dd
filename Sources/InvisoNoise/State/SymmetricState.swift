import Crypto
public import Foundation
import InvisoCrypto

/// A Noise `SymmetricState` (rev 34 §5.2): chaining key, handshake hash and a `CipherState`.
public struct SymmetricState: Sendable {
    /// The hash function in use.
    public let hash: NoiseHash
    private var chainingKey: SymmetricKey
    /// The handshake hash `h`.
    public private(set) var handshakeHash: [UInt8]
    /// The cipher state that encrypts handshake payloads and static keys.
    public private(set) var cipherState: CipherState

    /// `InitializeSymmetric(protocol_name)`: `h` is the name padded with zeros when it fits
    /// in HASHLEN bytes, or its hash otherwise; `ck = h`; no key.
    public init(protocolName: String, cipher: NoiseCipher, hash: NoiseHash) {
        self.hash = hash
        let name = Array(protocolName.utf8)
        if name.count <= hash.hashLength {
            handshakeHash = name + [UInt8](repeating: 0, count: hash.hashLength - name.count)
        } else {
            handshakeHash = hash.hash(name)
        }
        chainingKey = SymmetricKey(data: handshakeHash)
        cipherState = CipherState(cipher: cipher, key: nil)
    }

    /// `MixKey(ikm)`: `ck, temp_k = HKDF(ck, ikm, 2)`; the cipher key is `temp_k`
    /// truncated to 32 bytes (matters for 64-byte hashes), with the nonce reset to 0.
    public mutating func mixKey(_ inputKeyMaterial: some ContiguousBytes) {
        let outputs = hash.hkdf(chainingKey: chainingKey, inputKeyMaterial: inputKeyMaterial, outputs: 2)
        chainingKey = outputs[0]
        cipherState = CipherState(cipher: cipherState.cipher, key: Self.truncated(outputs[1]))
    }

    /// `MixHash(data)`: `h = HASH(h ‖ data)`.
    public mutating func mixHash(_ data: some ContiguousBytes) {
        handshakeHash = hash.hash(handshakeHash, data)
    }

    /// `MixKeyAndHash(ikm)`: `ck, temp_h, temp_k = HKDF(ck, ikm, 3)`; `MixHash(temp_h)`;
    /// the cipher key is `temp_k` truncated to 32 bytes. Used for `psk` tokens.
    public mutating func mixKeyAndHash(_ inputKeyMaterial: some ContiguousBytes) {
        let outputs = hash.hkdf(chainingKey: chainingKey, inputKeyMaterial: inputKeyMaterial, outputs: 3)
        chainingKey = outputs[0]
        outputs[1].withUnsafeBytes { mixHash(Array($0)) }
        cipherState = CipherState(cipher: cipherState.cipher, key: Self.truncated(outputs[2]))
    }

    /// `EncryptAndHash(plaintext)`: encrypts with `h` as associated data (or passes the
    /// bytes through before any key is set), then mixes the ciphertext into `h`.
    public mutating func encryptAndHash(_ plaintext: [UInt8]) throws(NoiseError) -> [UInt8] {
        let ciphertext = try cipherState.encrypt(plaintext, ad: handshakeHash)
        mixHash(ciphertext)
        return ciphertext
    }

    /// `DecryptAndHash(ciphertext)`: the inverse of ``encryptAndHash(_:)``. On failure the
    /// state is unchanged.
    public mutating func decryptAndHash(_ ciphertext: ArraySlice<UInt8>) throws(NoiseError) -> [UInt8] {
        let plaintext = try cipherState.decrypt(ciphertext, ad: handshakeHash)
        mixHash(Array(ciphertext))
        return plaintext
    }

    /// `Split()`: derives the two transport cipher states from the chaining key. The first
    /// encrypts initiator-to-responder traffic, the second responder-to-initiator.
    public func split() -> (CipherState, CipherState) {
        let outputs = hash.hkdf(chainingKey: chainingKey, inputKeyMaterial: [UInt8](), outputs: 2)
        return (CipherState(cipher: cipherState.cipher, key: Self.truncated(outputs[0])),
                CipherState(cipher: cipherState.cipher, key: Self.truncated(outputs[1])))
    }

    private static func truncated(_ key: SymmetricKey) -> SymmetricKey {
        key.bitCount == 256 ? key : key.withUnsafeBytes { SymmetricKey(data: $0.prefix(32)) }
    }
}

// MARK: - Redacted description

extension SymmetricState: CustomStringConvertible {
    /// Names the hash and the cipher state; never the chaining key.
    public var description: String { "SymmetricState(\(hash.rawValue), \(cipherState))" }
}
