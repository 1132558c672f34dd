/// One SecureChats/KryptEY envelope: what a user pastes into another messenger.
///
/// The same content travels in two JSON forms (`../shared/docs/SECURECHATS.md`, "The
/// envelope"): the Android apps' positional arrays (``androidJSON()``, the default we
/// write) and the iOS port's keyed objects (``iOSJSON()``); ``init(json:)`` reads both.
/// Byte fields hold raw bytes here; their base64 forms are the codec's business. What the
/// bytes mean (libsignal keys and messages) is checked where they are used.
///
/// ```
/// preKeyResponse  ciphertext   kind
///   present        present     rotation  (the sender's pre-keys rotated: bundle first)
///   present        absent      invite
///   absent         present     message
///   absent         absent      notOurs
/// ```
public struct OfflineEnvelope: Sendable, Hashable {
    /// libsignal's serialized message, `nil` in an invite.
    public var ciphertext: [UInt8]?
    /// libsignal's message type: ``CiphertextType/preKey`` (3), ``CiphertextType/whisper``
    /// (2), or 0 in an invite.
    public var ciphertextType: Int
    /// The sender's device id.
    public var deviceID: Int
    /// The sender's published keys, in an invite or a rotation.
    public var preKeyResponse: PreKeyResponse?
    /// The sender's Signal address name (a UUID string).
    public var address: String
    /// When it was sent, milliseconds since 1970.
    public var timestamp: Int64

    /// An envelope.
    public init(
        ciphertext: [UInt8]?, ciphertextType: Int, deviceID: Int, preKeyResponse: PreKeyResponse?, address: String,
        timestamp: Int64
    ) {
        self.ciphertext = ciphertext
        self.ciphertextType = ciphertextType
        self.deviceID = deviceID
        self.preKeyResponse = preKeyResponse
        self.address = address
        self.timestamp = timestamp
    }

    /// libsignal's ciphertext message types as the envelope carries them.
    public enum CiphertextType {
        /// No ciphertext (an invite).
        public static let none = 0
        /// A `SignalMessage`.
        public static let whisper = 2
        /// A `PreKeySignalMessage` (the first messages of a session).
        public static let preKey = 3
    }

    /// What an envelope is, by which parts it has, as the apps decide.
    public enum Kind: String, Sendable, Hashable {
        /// Keys only: someone offers a session.
        case invite
        /// A ciphertext only.
        case message
        /// Keys and a ciphertext: the sender's signed pre-key rotated; process the keys,
        /// then decrypt.
        case rotation
        /// Neither: not an envelope of ours.
        case notOurs
    }

    /// Which kind this is.
    public var kind: Kind {
        switch (preKeyResponse != nil, ciphertext != nil) {
        case (true, true): .rotation
        case (true, false): .invite
        case (false, true): .message
        case (false, false): .notOurs
        }
    }

    /// The keys a sender publishes: its identity key, one device's pre-keys and,
    /// from clients with PQXDH, a signed Kyber1024 pre-key.
    public struct PreKeyResponse: Sendable, Hashable {
        /// The sender's identity public key (33 bytes, `0x05 ‖ u`).
        public var identityKey: [UInt8]
        /// The sender's devices (an invite has one).
        public var devices: [Device]
        /// The Kyber pre-key's id; `nil` from clients without PQXDH (KryptEY).
        public var kyberPreKeyID: Int?
        /// The Kyber pre-key (`0x08 ‖ 1568 bytes`).
        public var kyberPublicKey: [UInt8]?
        /// The identity key's signature over ``kyberPublicKey``.
        public var kyberSignature: [UInt8]?

        /// A pre-key response.
        public init(
            identityKey: [UInt8], devices: [Device], kyberPreKeyID: Int? = nil, kyberPublicKey: [UInt8]? = nil,
            kyberSignature: [UInt8]? = nil
        ) {
            self.identityKey = identityKey
            self.devices = devices
            self.kyberPreKeyID = kyberPreKeyID
            self.kyberPublicKey = kyberPublicKey
            self.kyberSignature = kyberSignature
        }
    }

    /// One device's pre-keys.
    public struct Device: Sendable, Hashable {
        /// The device id.
        public var deviceID: Int
        /// A one-time pre-key, if the sender offers one.
        public var preKey: PreKey?
        /// The device's registration id.
        public var registrationID: Int
        /// The signed pre-key.
        public var signedPreKey: SignedPreKey

        /// A device.
        public init(deviceID: Int, preKey: PreKey?, registrationID: Int, signedPreKey: SignedPreKey) {
            self.deviceID = deviceID
            self.preKey = preKey
            self.registrationID = registrationID
            self.signedPreKey = signedPreKey
        }
    }

    /// A one-time pre-key: its id and public key (33 bytes).
    public struct PreKey: Sendable, Hashable {
        /// The key's id.
        public var keyID: Int
        /// The public key.
        public var publicKey: [UInt8]

        /// A pre-key.
        public init(keyID: Int, publicKey: [UInt8]) {
            self.keyID = keyID
            self.publicKey = publicKey
        }
    }

    /// A signed pre-key: id, public key (33 bytes) and the identity key's signature over it.
    public struct SignedPreKey: Sendable, Hashable {
        /// The key's id.
        public var keyID: Int
        /// The public key.
        public var publicKey: [UInt8]
        /// The identity key's XEdDSA signature over ``publicKey`` (64 bytes).
        public var signature: [UInt8]

        /// A signed pre-key.
        public init(keyID: Int, publicKey: [UInt8], signature: [UInt8]) {
            self.keyID = keyID
            self.publicKey = publicKey
            self.signature = signature
        }
    }
}

extension OfflineEnvelope: CustomStringConvertible {
    /// The kind, sender and time; no key or ciphertext bytes.
    public var description: String {
        "OfflineEnvelope(\(kind), address: \(address), device: \(deviceID), timestamp: \(timestamp))"
    }
}
