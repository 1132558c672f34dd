public import Crypto

/// BitChat's packet signatures: Ed25519 over the canonical signing encoding.
///
/// The signing encoding is the packet encoded **with padding**, with the TTL set to 0, the
/// RSR flag cleared and no signature (so flag 0x02 is clear and the 64 bytes are absent).
/// Everything else is covered as carried: version, type, timestamp, the other flags,
/// sender, recipient, route and payload (compressed bytes and their size prefix included).
/// TTL and RSR are left out because relays change them. Sources:
/// permissionlesstech/bitchat localPackages/BitFoundation/Sources/BitFoundation/BitchatPacket.swift@2b184d98c165fe841e750e0761c5b59e00f80fc0
/// (`toBinaryDataForSigning`: signature nil, ttl 0, isRSR false, then the default, padded,
/// encoding) and permissionlesstech/bitchat-android
/// app/src/main/java/com/bitchat/android/protocol/BinaryProtocol.kt@016f4b553eeb2aa15ff967c58fde3519b1ac0d34
/// (signature null, TTL 0, route kept, padded encoding).
extension MeshPacket {
    /// The bytes the origin signs: the padded encoding with TTL 0, RSR clear and no
    /// signature.
    ///
    /// - Throws: What ``encoded(padded:)`` throws for an unencodable packet.
    public func signingBytes() throws(MeshWireError) -> [UInt8] {
        try encode(ttl: 0, isRSR: false, signature: nil, padded: true)
    }

    /// Signs the packet with the origin's Ed25519 key, replacing any signature it had.
    ///
    /// - Throws: What ``signingBytes()`` throws, or ``MeshWireError/signingFailed``.
    public mutating func sign(using key: Curve25519.Signing.PrivateKey) throws(MeshWireError) {
        let message = try signingBytes()
        do {
            signature = Array(try key.signature(for: message))
        } catch {
            throw MeshWireError(.signingFailed)
        }
    }

    /// Whether the packet carries a valid Ed25519 signature by `publicKey` over its signing
    /// encoding. `false` when unsigned, unencodable or forged.
    public func isSignatureValid(publicKey: Curve25519.Signing.PublicKey) -> Bool {
        guard let signature, signature.count == Self.signatureSize, let message = try? signingBytes() else {
            return false
        }
        return publicKey.isValidSignature(signature, for: message)
    }
}
