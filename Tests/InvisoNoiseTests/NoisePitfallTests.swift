import Crypto
import InvisoCrypto
@testable import InvisoNoise
import InvisoTesting
import Testing

@Suite("Noise pitfalls")
struct NoisePitfallTests {
    @Test("nonce 2^64-1 is reserved: encrypt and decrypt refuse, nothing wraps")
    func nonceExhaustion() throws {
        var pair = try HandshakePair("Noise_NN_25519_ChaChaPoly_SHA256")
        let (initiator, responder) = try pair.complete()
        var sender = try #require(initiator.sender)
        var receiver = try #require(responder.receiver)
        sender.setNonce(.max - 1)
        receiver.setNonce(.max - 1)
        let last = try sender.encrypt([42])
        #expect(try receiver.decrypt(last) == [42])
        #expect(sender.nonce == .max)
        #expect(throws: NoiseError.nonceExhausted) { try sender.encrypt([1]) }
        #expect(sender.nonce == .max)
        #expect(throws: NoiseError.nonceExhausted) { try receiver.decrypt(last) }
        #expect(receiver.nonce == .max)
    }

    @Test("a tampered transport message is rejected, state unchanged, next genuine message decrypts")
    func tamperTransport() throws {
        var pair = try HandshakePair("Noise_XX_25519_AESGCM_BLAKE2s")
        var (initiator, responder) = try pair.complete()
        let message = try initiator.encrypt(Array("hello, tamper".utf8))
        for index in message.indices {
            var forged = message
            forged[index] ^= 0x01
            let before = responder.receiver?.nonce
            #expect(throws: NoiseError.authenticationFailed) { try responder.decrypt(forged) }
            #expect(responder.receiver?.nonce == before)
        }
        #expect(throws: NoiseError.authenticationFailed) { try responder.decrypt(Array(message.dropLast())) }
        #expect(throws: NoiseError.authenticationFailed) { try responder.decrypt([]) }
        #expect(try responder.decrypt(message) == Array("hello, tamper".utf8))
        #expect(throws: NoiseError.authenticationFailed) { try responder.decrypt(message) }  // replay: nonce moved on
    }

    @Test("a tampered handshake message is rejected, state unchanged, genuine message still accepted")
    func tamperHandshake() throws {
        var pair = try HandshakePair("Noise_XX_25519_ChaChaPoly_SHA256")
        _ = try pair.responder.readMessage(try pair.initiator.writeMessage())
        let second = try pair.responder.writeMessage(Array("payload".utf8))
        let hashBefore = pair.initiator.handshakeHash
        for index in second.indices {
            var forged = second
            forged[index] ^= 0x80
            #expect(throws: NoiseError.self) { try pair.initiator.readMessage(forged) }
            #expect(pair.initiator.handshakeHash == hashBefore)
            #expect(pair.initiator.nextMessageIndex == 1)
        }
        #expect(throws: NoiseError.malformedMessage) { try pair.initiator.readMessage(Array(second.prefix(20))) }
        #expect(try pair.initiator.readMessage(second) == Array("payload".utf8))
    }

    @Test("65519-byte plaintext accepted, 65520 rejected before any state change")
    func messageSizeLimit() throws {
        var pair = try HandshakePair("Noise_NN_25519_ChaChaPoly_BLAKE2b")
        var (initiator, responder) = try pair.complete()
        let maximal = [UInt8](repeating: 7, count: 65_519)
        let sealed = try initiator.encrypt(maximal)
        #expect(sealed.count == 65_535)
        #expect(try responder.decrypt(sealed) == maximal)
        #expect(throws: NoiseError.messageTooLarge) { try initiator.encrypt(maximal + [0]) }
        #expect(initiator.sender?.nonce == 1)
        #expect(throws: NoiseError.messageTooLarge) { try responder.decrypt([UInt8](repeating: 0, count: 65_536)) }
        #expect(responder.receiver?.nonce == 1)
        #expect(try responder.decrypt(try initiator.encrypt([9])) == [9])

        // Handshake messages obey the same limit: NN's first message carries e (32) + payload.
        var fresh = try HandshakePair("Noise_NN_25519_ChaChaPoly_SHA256")
        #expect(throws: NoiseError.messageTooLarge) { try fresh.initiator.writeMessage([UInt8](repeating: 0, count: 65_504)) }
        #expect(fresh.initiator.isWriteTurn && fresh.initiator.nextMessageIndex == 0)
        let full = try fresh.initiator.writeMessage([UInt8](repeating: 0, count: 65_503))
        #expect(full.count == 65_535)
        #expect(throws: NoiseError.messageTooLarge) { try fresh.responder.readMessage(full + [0]) }
        #expect(try fresh.responder.readMessage(full).count == 65_503)
    }

    @Test("PSK count and size are validated", arguments: [0, 2, 3])
    func pskCount(count: Int) throws {
        let keys = (0..<count).map { _ in SymmetricKey(size: .bits256) }
        #expect(throws: NoiseError.invalidPreSharedKey) {
            try HandshakeState(protocolName: "Noise_XXpsk3_25519_ChaChaPoly_SHA256", role: .initiator,
                               localStatic: .generate(), preSharedKeys: keys)
        }
    }

    @Test("PSKs must be 32 bytes")
    func pskSize() throws {
        for size in [0, 16, 31, 33, 64] {
            #expect(throws: NoiseError.invalidPreSharedKey) {
                try HandshakeState(protocolName: "Noise_NNpsk0_25519_ChaChaPoly_SHA256", role: .initiator,
                                   preSharedKeys: [SymmetricKey(data: [UInt8](repeating: 1, count: size))])
            }
        }
        #expect(throws: NoiseError.invalidPreSharedKey) {
            try HandshakeState(protocolName: "Noise_NN_25519_ChaChaPoly_SHA256", role: .initiator,
                               preSharedKeys: [SymmetricKey(size: .bits256)])
        }
    }

    @Test("different PSKs fail at the first message authenticated with the PSK")
    func pskMismatch() throws {
        var pair = try HandshakePair("Noise_NNpsk0_25519_ChaChaPoly_SHA256", psks: [SymmetricKey(size: .bits256)])
        var other = try HandshakePair("Noise_NNpsk0_25519_ChaChaPoly_SHA256", psks: [SymmetricKey(size: .bits256)])
        #expect(throws: NoiseError.authenticationFailed) { try other.responder.readMessage(try pair.initiator.writeMessage([1])) }
    }

    @Test("a prologue mismatch fails at the first encrypted payload")
    func prologueMismatch() throws {
        var pair = try HandshakePair("Noise_NN_25519_ChaChaPoly_SHA256", prologue: [1, 2, 3], responderPrologue: [1, 2, 4])
        // Message 1 of NN has no key yet: its payload travels in clear and is accepted.
        #expect(try pair.responder.readMessage(try pair.initiator.writeMessage([0xAA])) == [0xAA])
        // Message 2 is encrypted with h as associated data: the mismatch shows here.
        let second = try pair.responder.writeMessage([0xBB])
        #expect(throws: NoiseError.authenticationFailed) { try pair.initiator.readMessage(second) }
    }

    @Test("without a key, payloads pass through in clear (empty-key rule)")
    func emptyKeyPassThrough() throws {
        var pair = try HandshakePair("Noise_NN_25519_ChaChaPoly_SHA256")
        let first = try pair.initiator.writeMessage([9, 8, 7])
        #expect(first.count == 35)
        #expect(Array(first.suffix(3)) == [9, 8, 7])
    }

    @Test("rekey replaces the key as ENCRYPT(k, 2^64-1, empty, zeros) and keeps the nonce")
    func rekey() throws {
        var pair = try HandshakePair("Noise_NN_25519_AESGCM_SHA256")
        var (initiator, responder) = try pair.complete()
        #expect(try responder.decrypt(try initiator.encrypt([1])) == [1])
        var probe = try #require(initiator.sender)
        let oldKey = try #require(probe.keyBytesForTesting)
        probe.rekey()
        let expected = Array(NoiseCipher.aesGCM.encrypt(key: SymmetricKey(data: oldKey), nonce: .max, ad: [],
                                                        plaintext: [UInt8](repeating: 0, count: 32)).prefix(32))
        #expect(probe.keyBytesForTesting == expected)
        #expect(probe.nonce == 1)

        initiator.rekeySender()
        #expect(initiator.sender?.nonce == 1)
        let afterOneSided = try initiator.encrypt([2])
        var stale = responder
        #expect(throws: NoiseError.authenticationFailed) { try stale.decrypt(afterOneSided) }
        responder.rekeyReceiver()
        #expect(responder.receiver?.nonce == 1)
        #expect(try responder.decrypt(afterOneSided) == [2])
    }

    static let lowOrderPoints: [[UInt8]] = [
        [UInt8](repeating: 0, count: 32),
        [1] + [UInt8](repeating: 0, count: 31),
        // Points of order 8 (RFC 7748 §6.1 discussion; the list from libsodium's blocklist is public data).
        [UInt8](hex: "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800")!,
        [UInt8](hex: "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157")!,
        [UInt8](hex: "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")!,
    ]

    @Test("low-order and all-zero peer keys are rejected", arguments: lowOrderPoints)
    func lowOrderKeys(point: [UInt8]) throws {
        var pair = try HandshakePair("Noise_NN_25519_ChaChaPoly_SHA256")
        var first = try pair.initiator.writeMessage()
        first.replaceSubrange(0..<32, with: point)
        _ = try pair.responder.readMessage(first)
        let hashBefore = pair.responder.handshakeHash
        #expect(throws: NoiseError.lowOrderPublicKey) { try pair.responder.writeMessage() }
        #expect(pair.responder.handshakeHash == hashBefore)
        #expect(throws: NoiseError.lowOrderPublicKey) {
            try HandshakeState(protocolName: "Noise_NK_25519_ChaChaPoly_SHA256", role: .initiator, remoteStatic: point)
                .writeMessageCopy()
        }
    }

    @Test("64-byte hashes: cipher keys are the first 32 bytes of the HKDF output")
    func keyTruncation() throws {
        for hash in [NoiseHash.sha512, .blake2b] {
            var state = SymmetricState(protocolName: "Noise_NN_25519_ChaChaPoly_\(hash.rawValue)", cipher: .chaChaPoly, hash: hash)
            let ck = state.handshakeHash
            let ikm = [UInt8](repeating: 0x5A, count: 32)
            state.mixKey(ikm)
            let temp = hash.hmac(key: SymmetricKey(data: ck), ikm)
            let output1 = hash.hmac(key: temp, [0x01])
            let output2 = hash.hmac(key: temp, output1.withUnsafeBytes { Array($0) } + [0x02])
            let full = output2.withUnsafeBytes { Array($0) }
            #expect(full.count == 64)
            #expect(state.cipherState.keyBytesForTesting == Array(full.prefix(32)))
        }
    }

    @Test("calls out of turn or out of phase are errors")
    func outOfTurn() throws {
        var pair = try HandshakePair("Noise_XX_25519_ChaChaPoly_SHA256")
        #expect(throws: NoiseError.outOfTurn) { try pair.initiator.readMessage([UInt8](repeating: 0, count: 48)) }
        #expect(throws: NoiseError.outOfTurn) { try pair.responder.writeMessage() }
        #expect(throws: NoiseError.handshakeNotComplete) { try pair.initiator.transport() }
        _ = try pair.complete()
        #expect(throws: NoiseError.handshakeAlreadyComplete) { try pair.initiator.writeMessage() }
        #expect(throws: NoiseError.handshakeAlreadyComplete) { try pair.responder.readMessage([]) }
    }

    @Test("one-way patterns: only the initiator sends")
    func oneWay() throws {
        var pair = try HandshakePair("Noise_X_25519_ChaChaPoly_SHA256")
        var (initiator, responder) = try pair.complete()
        #expect(try responder.decrypt(try initiator.encrypt([1])) == [1])
        #expect(throws: NoiseError.sendNotAllowed) { try responder.encrypt([1]) }
        #expect(throws: NoiseError.receiveNotAllowed) { try initiator.decrypt([UInt8](repeating: 0, count: 16)) }
    }

    @Test("missing and unexpected keys are reported")
    func keyRequirements() throws {
        #expect(throws: NoiseError.missingKey) {
            try HandshakeState(protocolName: "Noise_XX_25519_ChaChaPoly_SHA256", role: .initiator)
        }
        #expect(throws: NoiseError.missingKey) {
            try HandshakeState(protocolName: "Noise_IK_25519_ChaChaPoly_SHA256", role: .initiator, localStatic: .generate())
        }
        #expect(throws: NoiseError.unexpectedKey) {
            try HandshakeState(protocolName: "Noise_NN_25519_ChaChaPoly_SHA256", role: .initiator,
                               remoteStatic: NoiseKeyPair.generate().publicKey)
        }
        #expect(throws: NoiseError.invalidKey) {
            try HandshakeState(protocolName: "Noise_NK_25519_ChaChaPoly_SHA256", role: .initiator, remoteStatic: [1, 2, 3])
        }
        #expect(throws: NoiseError.invalidKey) { try NoiseKeyPair(rawPrivateKey: [UInt8](repeating: 1, count: 31)) }
    }
}

extension HandshakeState {
    /// Writes the next message on a copy (so a test can call it on an rvalue).
    func writeMessageCopy() throws(NoiseError) -> [UInt8] {
        var copy = self
        return try copy.writeMessage()
    }
}
