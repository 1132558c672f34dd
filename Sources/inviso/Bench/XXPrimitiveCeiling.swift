import Crypto
import Foundation

private let hkdfOne: [UInt8] = [0x01]
private let hkdfTwo: [UInt8] = [0x02]

/// The "primitive ceiling" of a Noise XX handshake: exactly the cryptographic operations
/// that both parties of `Noise_XX_25519_ChaChaPoly_<hash>` perform (rev 34 §5, §7.5), done
/// directly with swift-crypto and nothing else, with empty prologue and payloads.
///
/// Count, for the two parties together:
/// - X25519: 2 key generations (the ephemerals; statics are pre-made) and 6 agreements
///   (`ee`, `es`, `se` on each side).
/// - `MixKey` ×3 per side plus `Split()` per side = 8 HKDFs of two outputs = 24 HMACs.
/// - `MixHash`: the prologue, `e` and the (unencrypted) payload of message 1, `e`, the
///   encrypted `s` and payload of message 2, the encrypted `s` and payload of message 3
///   = 8 per side, 16 in all; plus one hash of the protocol name per side when it is
///   longer than HASHLEN (the BLAKE2s name is 33 bytes; the SHA256 one is exactly 32).
/// - ChaCha20-Poly1305: the two static keys and the payloads of messages 2 and 3 are
///   sealed once and opened once (4 seals + 4 opens); message 1's payload travels in
///   the clear because no key exists yet.
///
/// As a ceiling it is a little generous: the reader opens the writer's `SealedBox`
/// directly instead of re-parsing bytes from a wire.
struct XXPrimitiveCeiling<H: HashFunction> {
    let protocolName: [UInt8]
    let initiatorStatic: Curve25519.KeyAgreement.PrivateKey
    let responderStatic: Curve25519.KeyAgreement.PrivateKey
    private let initiatorStaticPublic: Data
    private let responderStaticPublic: Data

    init(protocolName: [UInt8], initiatorStatic: Curve25519.KeyAgreement.PrivateKey,
         responderStatic: Curve25519.KeyAgreement.PrivateKey) {
        self.protocolName = protocolName
        self.initiatorStatic = initiatorStatic
        self.responderStatic = responderStatic
        initiatorStaticPublic = initiatorStatic.publicKey.rawRepresentation
        responderStaticPublic = responderStatic.publicKey.rawRepresentation
    }

    /// Runs one handshake's worth of work; returns a byte derived from the results.
    func run() -> UInt8 {
        let initiatorEphemeral = Curve25519.KeyAgreement.PrivateKey()
        let initiatorEphemeralPublic = initiatorEphemeral.publicKey.rawRepresentation
        let responderEphemeral = Curve25519.KeyAgreement.PrivateKey()
        let responderEphemeralPublic = responderEphemeral.publicKey.rawRepresentation
        let empty = Data()

        var initiator = Party(protocolName: protocolName)
        var responder = Party(protocolName: protocolName)
        initiator.mixHash(empty)  // prologue
        responder.mixHash(empty)

        // -> e (payload in the clear)
        initiator.mixHash(initiatorEphemeralPublic)
        initiator.mixHash(empty)
        responder.mixHash(initiatorEphemeralPublic)
        responder.mixHash(empty)

        // <- e, ee, s, es (payload encrypted)
        responder.mixHash(responderEphemeralPublic)
        initiator.mixHash(responderEphemeralPublic)
        responder.mixKey(Self.agree(responderEphemeral, initiatorEphemeralPublic))
        initiator.mixKey(Self.agree(initiatorEphemeral, responderEphemeralPublic))
        initiator.decryptAndHash(responder.encryptAndHash(responderStaticPublic))
        responder.mixKey(Self.agree(responderStatic, initiatorEphemeralPublic))
        initiator.mixKey(Self.agree(initiatorEphemeral, responderStaticPublic))
        initiator.decryptAndHash(responder.encryptAndHash(empty))

        // -> s, se (payload encrypted)
        responder.decryptAndHash(initiator.encryptAndHash(initiatorStaticPublic))
        initiator.mixKey(Self.agree(initiatorStatic, responderEphemeralPublic))
        responder.mixKey(Self.agree(responderEphemeral, initiatorStaticPublic))
        responder.decryptAndHash(initiator.encryptAndHash(empty))

        let initiatorKeys = initiator.split()
        let responderKeys = responder.split()
        return initiatorKeys.0.withUnsafeBytes { $0[0] } ^ responderKeys.1.withUnsafeBytes { $0[0] }
            ^ initiator.hashByte ^ responder.hashByte
    }

    private static func agree(_ privateKey: Curve25519.KeyAgreement.PrivateKey, _ peer: Data) -> SharedSecret {
        do {
            return try privateKey.sharedSecretFromKeyAgreement(with: .init(rawRepresentation: peer))
        } catch {
            fatalError("X25519 failed in the benchmark")
        }
    }

    /// One party's symmetric state, kept as close to the primitives as possible.
    private struct Party {
        private var initialHash: [UInt8]?
        private var digest: H.Digest?
        private var chainingKey: SymmetricKey
        private var key: SymmetricKey?
        private var nonce: UInt64 = 0
        private var nonceBytes = [UInt8](repeating: 0, count: 12)

        init(protocolName: [UInt8]) {
            if protocolName.count <= H.Digest.byteCount {
                let padded = protocolName + [UInt8](repeating: 0, count: H.Digest.byteCount - protocolName.count)
                initialHash = padded
                chainingKey = SymmetricKey(data: padded)
            } else {
                let hashed = H.hash(data: protocolName)
                digest = hashed
                chainingKey = SymmetricKey(data: hashed)
            }
        }

        var hashByte: UInt8 { withHash { $0[0] } }

        private func withHash<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            if let digest { return try digest.withUnsafeBytes(body) }
            return try initialHash!.withUnsafeBytes(body)
        }

        mutating func mixHash(_ data: Data) {
            var hasher = H()
            withHash { hasher.update(bufferPointer: $0) }
            hasher.update(data: data)
            digest = hasher.finalize()
        }

        /// `MixHash(ciphertext ‖ tag)`, read straight out of the sealed box (no copies).
        mutating func mixHash(_ box: ChaChaPoly.SealedBox) {
            var hasher = H()
            withHash { hasher.update(bufferPointer: $0) }
            box.combined.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[12...])) }
            digest = hasher.finalize()
        }

        mutating func mixKey(_ secret: SharedSecret) {
            let (first, second) = secret.withUnsafeBytes { hkdf($0) }
            chainingKey = first
            key = second
            nonce = 0
        }

        func split() -> (SymmetricKey, SymmetricKey) {
            hkdf(UnsafeRawBufferPointer(start: nil, count: 0))
        }

        private func hkdf(_ inputKeyMaterial: UnsafeRawBufferPointer) -> (SymmetricKey, SymmetricKey) {
            let tempKey = SymmetricKey(data: HMAC<H>.authenticationCode(for: inputKeyMaterial, using: chainingKey))
            let first = HMAC<H>.authenticationCode(for: hkdfOne, using: tempKey)
            var second = HMAC<H>(key: tempKey)
            first.withUnsafeBytes { second.update(data: $0) }
            second.update(data: hkdfTwo)
            return (SymmetricKey(data: first), SymmetricKey(data: second.finalize()))
        }

        private mutating func currentNonce() -> ChaChaPoly.Nonce {
            let counter = nonce
            nonceBytes.withUnsafeMutableBytes { $0.storeBytes(of: counter.littleEndian, toByteOffset: 4, as: UInt64.self) }
            nonce += 1
            do {
                return try ChaChaPoly.Nonce(data: nonceBytes)
            } catch {
                fatalError("12-byte nonce rejected")
            }
        }

        mutating func encryptAndHash(_ plaintext: Data) -> ChaChaPoly.SealedBox {
            let nonce = currentNonce()
            do {
                let box = try withHash { try ChaChaPoly.seal(plaintext, using: key!, nonce: nonce, authenticating: $0) }
                mixHash(box)
                return box
            } catch {
                fatalError("seal failed in the benchmark")
            }
        }

        mutating func decryptAndHash(_ box: ChaChaPoly.SealedBox) {
            _ = currentNonce()
            do {
                let plaintext = try withHash { try ChaChaPoly.open(box, using: key!, authenticating: $0) }
                consume(plaintext.first ?? 0)
                mixHash(box)
            } catch {
                fatalError("open failed in the benchmark")
            }
        }
    }
}
