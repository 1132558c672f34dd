package import InvisoCrypto

/// X3DH (message version 3) and PQXDH (version 4) session setup, with libsignal's exact
/// key-derivation inputs.
///
/// Secret input = 32 × 0xFF ‖ DH(IK_A, SPK_B) ‖ DH(EK_A, IK_B) ‖ DH(EK_A, SPK_B)
/// [‖ DH(EK_A, OPK_B)] [‖ Kyber shared secret]; HKDF-SHA256 without salt, info
/// `WhisperText` (X3DH, 64 bytes) or `WhisperText_X25519_SHA-256_CRYSTALS-KYBER-1024`
/// (PQXDH, 96 bytes) → root key ‖ chain key [‖ a 32-byte key libsignal feeds to its sparse
/// post-quantum ratchet, which we do not run].
package enum SessionInitialization {
    /// What the initiator ("Alice") knows when she builds a session from a bundle.
    package struct AliceParameters {
        package var ourIdentity: IdentityKeyPair
        package var ourBaseKey: ECKeyPair
        package var theirIdentity: IdentityKey
        package var theirSignedPreKey: ECPublicKey
        package var theirOneTimePreKey: ECPublicKey?
        package var kyberSharedSecret: SecretBytes?
    }

    /// What the responder ("Bob") knows when he receives a pre-key message.
    package struct BobParameters {
        package var ourIdentity: IdentityKeyPair
        package var ourSignedPreKey: ECKeyPair
        package var ourOneTimePreKey: ECKeyPair?
        package var theirIdentity: IdentityKey
        package var theirBaseKey: ECPublicKey
        package var kyberSharedSecret: SecretBytes?
    }

    private static func deriveKeys(_ secrets: [SecretBytes], pqxdh: Bool) -> (RootKey, ChainKey) {
        var total = 32
        for secret in secrets { total += secret.count }
        let input = SecretBytes(count: total) { buffer in
            for index in 0..<32 { buffer[index] = 0xFF }
            var offset = 32
            for secret in secrets {
                secret.withUnsafeBytes { raw in
                    UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<offset + raw.count]).copyMemory(from: raw)
                }
                offset += secret.count
            }
        }
        let info = pqxdh ? RatchetConstants.pqxdhInfo : RatchetConstants.x3dhInfo
        let derived = hkdfSHA256(ikm: input, info: info, count: pqxdh ? 96 : 64)
        return (RootKey(derived.slice(0..<32)), ChainKey(key: derived.slice(32..<64), index: 0))
    }

    /// Alice's initial state: derive the shared secret, then take the first DH ratchet
    /// step toward Bob's signed pre-key (his initial ratchet key).
    package static func initializeAlice(
        _ parameters: AliceParameters, using generator: inout some RandomNumberGenerator
    ) throws(SignalError) -> SessionState {
        var secrets = [
            try parameters.ourIdentity.privateKey.agreement(with: parameters.theirSignedPreKey),
            try parameters.ourBaseKey.privateKey.agreement(with: parameters.theirIdentity.publicKey),
            try parameters.ourBaseKey.privateKey.agreement(with: parameters.theirSignedPreKey),
        ]
        if let oneTime = parameters.theirOneTimePreKey {
            secrets.append(try parameters.ourBaseKey.privateKey.agreement(with: oneTime))
        }
        if let kyber = parameters.kyberSharedSecret { secrets.append(kyber) }
        let pqxdh = parameters.kyberSharedSecret != nil
        let (rootKey, chainKey) = deriveKeys(secrets, pqxdh: pqxdh)

        let sendingRatchetKey = ECKeyPair.generate(using: &generator)
        let (sendingRoot, sendingChain) = try rootKey.createChain(
            theirRatchetKey: parameters.theirSignedPreKey, ourRatchetKey: sendingRatchetKey)
        return SessionState(
            sessionVersion: pqxdh ? 4 : 3,
            localIdentity: parameters.ourIdentity.identityKey,
            remoteIdentity: parameters.theirIdentity,
            rootKey: sendingRoot,
            previousCounter: 0,
            senderChain: SenderChain(ratchetKeyPair: sendingRatchetKey, chainKey: sendingChain),
            receiverChains: [ReceiverChain(ratchetKey: parameters.theirSignedPreKey, chainKey: chainKey, messageKeys: [])],
            pendingPreKey: nil,
            localRegistrationID: 0,
            remoteRegistrationID: 0,
            aliceBaseKey: parameters.ourBaseKey.publicKey)
    }

    /// Bob's initial state: the same shared secret; his signed pre-key is his first
    /// sending ratchet key.
    package static func initializeBob(_ parameters: BobParameters) throws(SignalError) -> SessionState {
        var secrets = [
            try parameters.ourSignedPreKey.privateKey.agreement(with: parameters.theirIdentity.publicKey),
            try parameters.ourIdentity.privateKey.agreement(with: parameters.theirBaseKey),
            try parameters.ourSignedPreKey.privateKey.agreement(with: parameters.theirBaseKey),
        ]
        if let oneTime = parameters.ourOneTimePreKey {
            secrets.append(try oneTime.privateKey.agreement(with: parameters.theirBaseKey))
        }
        if let kyber = parameters.kyberSharedSecret { secrets.append(kyber) }
        let pqxdh = parameters.kyberSharedSecret != nil
        let (rootKey, chainKey) = deriveKeys(secrets, pqxdh: pqxdh)
        return SessionState(
            sessionVersion: pqxdh ? 4 : 3,
            localIdentity: parameters.ourIdentity.identityKey,
            remoteIdentity: parameters.theirIdentity,
            rootKey: rootKey,
            previousCounter: 0,
            senderChain: SenderChain(ratchetKeyPair: parameters.ourSignedPreKey, chainKey: chainKey),
            receiverChains: [],
            pendingPreKey: nil,
            localRegistrationID: 0,
            remoteRegistrationID: 0,
            aliceBaseKey: parameters.theirBaseKey)
    }

    // MARK: - Seeded from an external secret

    /// What both sides of a session seeded from an external secret know: the root key and
    /// chain key that secret gave (Inviso v2 derives them from a Noise handshake) and the
    /// two identities bound into every message's MAC. There is no X3DH/PQXDH step, no
    /// pre-key and no base key; the session has message version 3.
    package struct SeededParameters {
        package var ourIdentity: IdentityKey
        package var theirIdentity: IdentityKey
        package var rootKey: RootKey
        package var chainKey: ChainKey

        package init(ourIdentity: IdentityKey, theirIdentity: IdentityKey, rootKey: RootKey, chainKey: ChainKey) {
            self.ourIdentity = ourIdentity
            self.theirIdentity = theirIdentity
            self.rootKey = rootKey
            self.chainKey = chainKey
        }
    }

    /// The message version of seeded sessions (libsignal's X3DH version).
    package static let seededSessionVersion: UInt8 = 3

    /// The side that speaks second in the seeding exchange, as Alice: the seed's chain key
    /// becomes the receiving chain for the peer's ratchet key, and a DH ratchet step with
    /// a fresh key from `generator` gives the sending chain (exactly what
    /// ``initializeAlice(_:using:)`` does after X3DH, with the peer's ratchet key in the
    /// place of the signed pre-key).
    ///
    /// - Throws: ``SignalError/lowOrderPublicKey`` when `theirRatchetKey` gives an all-zero DH.
    package static func initializeAlice(
        seeded parameters: SeededParameters, theirRatchetKey: ECPublicKey,
        using generator: inout some RandomNumberGenerator
    ) throws(SignalError) -> SessionState {
        let sendingRatchetKey = ECKeyPair.generate(using: &generator)
        let (sendingRoot, sendingChain) = try parameters.rootKey.createChain(
            theirRatchetKey: theirRatchetKey, ourRatchetKey: sendingRatchetKey)
        return SessionState(
            sessionVersion: seededSessionVersion,
            localIdentity: parameters.ourIdentity,
            remoteIdentity: parameters.theirIdentity,
            rootKey: sendingRoot,
            previousCounter: 0,
            senderChain: SenderChain(ratchetKeyPair: sendingRatchetKey, chainKey: sendingChain),
            receiverChains: [ReceiverChain(ratchetKey: theirRatchetKey, chainKey: parameters.chainKey, messageKeys: [])],
            pendingPreKey: nil,
            localRegistrationID: 0,
            remoteRegistrationID: 0,
            aliceBaseKey: nil)
    }

    /// The side whose ratchet key was sent in the seeding exchange, as Bob: its sending
    /// chain is (`ourRatchetKey`, the seed's chain key) and the root key is the seed's, as
    /// ``initializeBob(_:)`` does with the signed pre-key after X3DH.
    package static func initializeBob(seeded parameters: SeededParameters, ourRatchetKey: ECKeyPair) -> SessionState {
        SessionState(
            sessionVersion: seededSessionVersion,
            localIdentity: parameters.ourIdentity,
            remoteIdentity: parameters.theirIdentity,
            rootKey: parameters.rootKey,
            previousCounter: 0,
            senderChain: SenderChain(ratchetKeyPair: ourRatchetKey, chainKey: parameters.chainKey),
            receiverChains: [],
            pendingPreKey: nil,
            localRegistrationID: 0,
            remoteRegistrationID: 0,
            aliceBaseKey: nil)
    }
}
