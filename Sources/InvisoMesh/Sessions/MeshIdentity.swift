public import Crypto
public import InvisoNoise

/// A mesh node's long-term identity: the Noise static key its sessions authenticate with
/// and the Ed25519 key that signs its announcements.
///
/// The peer ID is the first 8 bytes of SHA-256 of the Noise static public key, and the
/// fingerprint the whole hash (BitChat's rule), so a peer that completes a Noise
/// handshake proves it owns the ID it claims.
public struct MeshIdentity: Sendable {
    /// The Noise static key pair (Curve25519).
    public let noiseKey: NoiseKeyPair
    /// The announcement signing key (Ed25519).
    public let signingKey: Curve25519.Signing.PrivateKey

    /// Wraps existing keys.
    public init(noiseKey: NoiseKeyPair, signingKey: Curve25519.Signing.PrivateKey) {
        self.noiseKey = noiseKey
        self.signingKey = signingKey
    }

    /// A fresh identity from the system's secure random generator.
    public static func generate() -> MeshIdentity {
        MeshIdentity(noiseKey: .generate(), signingKey: Curve25519.Signing.PrivateKey())
    }

    /// This node's peer ID.
    public var peerID: PeerID { Self.peerID(noiseKey: noiseKey.publicKey) }

    /// This node's fingerprint: SHA-256 of the Noise static public key.
    public var fingerprint: [UInt8] { Self.fingerprint(noiseKey: noiseKey.publicKey) }

    /// The Ed25519 public key that verifies this node's announcements.
    public var signingPublicKey: [UInt8] { Array(signingKey.publicKey.rawRepresentation) }

    /// The peer ID a Noise static public key stands for.
    public static func peerID(noiseKey: [UInt8]) -> PeerID {
        PeerID(bytes: fingerprint(noiseKey: noiseKey).prefix(8))!
    }

    /// The fingerprint of a Noise static public key: its SHA-256.
    public static func fingerprint(noiseKey: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: noiseKey))
    }
}

// MARK: - CustomStringConvertible

extension MeshIdentity: CustomStringConvertible {
    /// The peer ID only; keys never appear in descriptions.
    public var description: String { "MeshIdentity(\(peerID))" }
}
