public import Crypto
public import Foundation
import InvisoCrypto

/// The hash functions of rev 34 §12.5–§12.8, with the HMAC and HKDF Noise builds on them.
public enum NoiseHash: String, Sendable, Hashable {
    /// SHA-256 (HASHLEN 32, BLOCKLEN 64).
    case sha256 = "SHA256"
    /// SHA-512 (HASHLEN 64, BLOCKLEN 128).
    case sha512 = "SHA512"
    /// BLAKE2s-256 (HASHLEN 32, BLOCKLEN 64).
    case blake2s = "BLAKE2s"
    /// BLAKE2b-512 (HASHLEN 64, BLOCKLEN 128).
    case blake2b = "BLAKE2b"

    /// HASHLEN in bytes.
    public var hashLength: Int {
        switch self {
        case .sha256, .blake2s: 32
        case .sha512, .blake2b: 64
        }
    }

    /// HASH(data).
    public func hash(_ data: [UInt8]) -> [UInt8] {
        switch self {
        case .sha256: Array(SHA256.hash(data: data))
        case .sha512: Array(SHA512.hash(data: data))
        case .blake2s: Array(BLAKE2s.hash(data: data))
        case .blake2b: Array(BLAKE2b.hash(data: data))
        }
    }

    /// HASH(a ‖ b) without building the concatenation.
    func hash(_ a: [UInt8], _ b: some ContiguousBytes) -> [UInt8] {
        switch self {
        case .sha256: Self.hash(SHA256.self, a, b)
        case .sha512: Self.hash(SHA512.self, a, b)
        case .blake2s: Self.hash(BLAKE2s.self, a, b)
        case .blake2b: Self.hash(BLAKE2b.self, a, b)
        }
    }

    /// HMAC-HASH(key, data) (RFC 2104 with this hash's block length).
    public func hmac(key: SymmetricKey, _ data: some DataProtocol) -> SymmetricKey {
        switch self {
        case .sha256: Self.hmac(SHA256.self, key, data)
        case .sha512: Self.hmac(SHA512.self, key, data)
        case .blake2s: Self.hmac(BLAKE2s.self, key, data)
        case .blake2b: Self.hmac(BLAKE2b.self, key, data)
        }
    }

    /// HKDF(chaining_key, input_key_material, num_outputs) of rev 34 §4.3, returning two
    /// or three HASHLEN-byte outputs.
    public func hkdf(chainingKey: SymmetricKey, inputKeyMaterial: some ContiguousBytes, outputs: Int) -> [SymmetricKey] {
        precondition(outputs == 2 || outputs == 3, "Noise HKDF yields two or three outputs")
        let tempKey = inputKeyMaterial.withUnsafeBytes { hmac(key: chainingKey, $0) }
        // Each later output is HMAC(temp_key, previous ‖ counter), fed to the MAC piecewise so
        // that no copy of the secret previous output is left behind in a buffer of ours.
        let first = hmac(key: tempKey, previous: nil, counter: 0x01)
        let second = hmac(key: tempKey, previous: first, counter: 0x02)
        if outputs == 2 { return [first, second] }
        return [first, second, hmac(key: tempKey, previous: second, counter: 0x03)]
    }

    /// HMAC-HASH(key, previous ‖ counter) without concatenating the inputs.
    private func hmac(key: SymmetricKey, previous: SymmetricKey?, counter: UInt8) -> SymmetricKey {
        switch self {
        case .sha256: Self.hmac(SHA256.self, key, previous, counter)
        case .sha512: Self.hmac(SHA512.self, key, previous, counter)
        case .blake2s: Self.hmac(BLAKE2s.self, key, previous, counter)
        case .blake2b: Self.hmac(BLAKE2b.self, key, previous, counter)
        }
    }

    private static func hash<H: HashFunction>(_: H.Type, _ a: [UInt8], _ b: some ContiguousBytes) -> [UInt8] {
        var hasher = H()
        hasher.update(data: a)
        b.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        return hasher.finalize().withUnsafeBytes { [UInt8]($0) }
    }

    private static func hmac<H: HashFunction>(_: H.Type, _ key: SymmetricKey, _ data: some DataProtocol) -> SymmetricKey {
        let code = HMAC<H>.authenticationCode(for: data, using: key)
        return code.withUnsafeBytes { SymmetricKey(data: $0) }
    }

    private static func hmac<H: HashFunction>(_: H.Type, _ key: SymmetricKey, _ previous: SymmetricKey?, _ counter: UInt8) -> SymmetricKey {
        var mac = HMAC<H>(key: key)
        previous?.withUnsafeBytes { mac.update(data: $0) }
        withUnsafeBytes(of: counter) { mac.update(data: $0) }
        return mac.finalize().withUnsafeBytes { SymmetricKey(data: $0) }
    }
}
