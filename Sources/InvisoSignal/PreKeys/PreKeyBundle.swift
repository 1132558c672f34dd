/// The public keys a peer publishes so others can start a session with it.
///
/// Without a Kyber pre-key the session is set up with X3DH (message version 3); with one,
/// with PQXDH (version 4).
public struct PreKeyBundle: Sendable {
    /// The peer's registration id.
    public let registrationID: UInt32
    /// The peer's device id.
    public let deviceID: UInt32
    /// The optional one-time pre-key (id and public key).
    public let preKey: (id: UInt32, publicKey: ECPublicKey)?
    /// The signed pre-key id.
    public let signedPreKeyID: UInt32
    /// The signed pre-key.
    public let signedPreKey: ECPublicKey
    /// The identity key's XEdDSA signature over `signedPreKey.serialized`.
    public let signedPreKeySignature: [UInt8]
    /// The peer's identity key.
    public let identityKey: IdentityKey
    /// The optional Kyber pre-key (id, key, signature over its serialized form).
    public let kyberPreKey: (id: UInt32, publicKey: KyberPublicKey, signature: [UInt8])?

    /// Creates a bundle from its parts. Signatures are checked when a session is built.
    public init(
        registrationID: UInt32, deviceID: UInt32, preKey: (id: UInt32, publicKey: ECPublicKey)?,
        signedPreKeyID: UInt32, signedPreKey: ECPublicKey, signedPreKeySignature: [UInt8],
        identityKey: IdentityKey, kyberPreKey: (id: UInt32, publicKey: KyberPublicKey, signature: [UInt8])?
    ) {
        self.registrationID = registrationID
        self.deviceID = deviceID
        self.preKey = preKey
        self.signedPreKeyID = signedPreKeyID
        self.signedPreKey = signedPreKey
        self.signedPreKeySignature = signedPreKeySignature
        self.identityKey = identityKey
        self.kyberPreKey = kyberPreKey
    }
}
