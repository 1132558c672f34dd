import ArgumentParser
import Crypto
import CryptoExtras
import Foundation
import InvisoCrypto
import InvisoSignal

/// `inviso bench signal`: Double Ratchet messages and X3DH/PQXDH setups against the
/// primitive ceiling measured in the same run.
struct BenchSignal: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signal",
        abstract: "Benchmark Signal sessions against the swift-crypto primitive ceiling.",
        discussion: """
            messages: SessionCipher encrypt + parse + decrypt of 100-byte messages through \
            in-memory stores, beside the ceiling (both sides' chain step, message-key HKDF, \
            AES-256-CBC and HMAC-SHA256, each called directly; ours shares the chain step's \
            HMAC key schedule and precomputes the empty-salt HKDF extract, the ceiling does \
            not). setup: a session built from a \
            bundle, its first message sent and opened (pre-key message processing included), \
            beside the same X25519, XEdDSA, HKDF, Kyber and message primitives called \
            directly. Rounds alternate; ratio is the median of per-round ratios. Use -c release. \
            --filter matches the figure names, e.g. "Double Ratchet", "PQXDH".
            """
    )

    @OptionGroup var options: BenchOptions

    func run() throws {
        #if DEBUG
        FileHandle.standardError.write(Data("warning: debug build; use `swift run -c release inviso bench signal`\n".utf8))
        #endif
        let report = options.report
        report.header()
        let messageName = "Double Ratchet message 100B (send+receive)"
        if options.selected(messageName) { report.emit(try messages(name: messageName)) }
        for kyber in [false, true] {
            let name = kyber ? "PQXDH session setup + first message" : "X3DH session setup + first message"
            if options.selected(name) { report.emit(try setups(name: name, kyber: kyber)) }
        }
        let safetyName = "safety number (fingerprint v2, 5,200 rounds per side)"
        if options.selected(safetyName) { report.emit(try safetyNumbers(name: safetyName)) }
    }

    // MARK: Safety numbers

    /// A safety number (both sides' hashes) beside its ceiling: the same 2 × 5,200 SHA-512
    /// rounds of a digest and a 33-byte key, called directly.
    private func safetyNumbers(name: String) throws -> BenchResult {
        let local = IdentityKeyPair.generate().identityKey
        let remote = IdentityKeyPair.generate().identityKey
        let iterations = 5_200
        let ours = BenchOperation(workPerCall: 1) { count in
            do {
                for _ in 0..<count {
                    let fingerprint = try Fingerprint(
                        version: 2, iterations: iterations, localStableID: Array("alice".utf8), localIdentity: local,
                        remoteStableID: Array("bob".utf8), remoteIdentity: remote)
                    consume(fingerprint.scannable.serialized.last ?? 0)
                }
            } catch {
                fatalError("safety number failed in the benchmark: \(error)")
            }
        }
        let keys = [local.serialized, remote.serialized]
        let baseline = BenchOperation(workPerCall: 1) { count in
            for _ in 0..<count {
                for key in keys {
                    var digest = SHA512.hash(data: [0, 0] + key + Array("alice".utf8) + key)
                    for _ in 1..<iterations {
                        var hasher = SHA512()
                        digest.withUnsafeBytes { hasher.update(bufferPointer: $0) }
                        hasher.update(data: key)
                        digest = hasher.finalize()
                    }
                    consume(digest.withUnsafeBytes { $0[0] })
                }
            }
        }
        let rates = options.compare(ours: ours, baseline: baseline)
        return BenchResult(name: name, value: rates.ours, unit: "safety numbers/s", baseline: rates.baseline, ratio: rates.ratio)
    }

    // MARK: Messages

    private func messages(name: String) throws -> BenchResult {
        let pair = try SessionPair.established()
        let plaintext = [UInt8](repeating: 0x61, count: 100)
        let ours = BenchOperation(workPerCall: 1) { count in
            for _ in 0..<count { consume(pair.roundTrip(plaintext)) }
        }
        // The MAC covers both identity keys, the version byte and the protobuf: size it like ours.
        let sample = try SessionCipher.encrypt(plaintext, for: pair.bobAddress, store: &pair.alice)
        let parsed = try SignalMessage(serialized: sample.serialized)
        _ = try SessionCipher.decrypt(parsed, from: pair.aliceAddress, store: &pair.bob, using: &pair.random)
        let ceiling = MessageCeiling(macInputCount: 66 + sample.serialized.count - SignalMessage.macByteCount)
        let baseline = BenchOperation(workPerCall: 1) { count in
            for _ in 0..<count { consume(ceiling.run(plaintext)) }
        }
        let rates = options.compare(ours: ours, baseline: baseline)
        return BenchResult(name: name, value: rates.ours, unit: "messages/s", baseline: rates.baseline, ratio: rates.ratio)
    }

    // MARK: Setups

    private func setups(name: String, kyber: Bool) throws -> BenchResult {
        let fixture = try SetupFixture(kyber: kyber)
        let plaintext = [UInt8](repeating: 0x62, count: 100)
        let ours = BenchOperation(workPerCall: 1) { count in
            do {
                for _ in 0..<count { consume(try fixture.runOnce(plaintext)) }
            } catch {
                fatalError("Signal setup failed in the benchmark: \(error)")
            }
        }
        let ceiling = SetupCeiling(fixture: fixture, kyber: kyber)
        let baseline = BenchOperation(workPerCall: 1) { count in
            for _ in 0..<count { consume(ceiling.run(plaintext)) }
        }
        let rates = options.compare(ours: ours, baseline: baseline)
        return BenchResult(name: name, value: rates.ours, unit: "setups/s", baseline: rates.baseline, ratio: rates.ratio)
    }
}

/// Two in-memory stores with an established session (both sides have sent), carried
/// between batches.
final class SessionPair {
    var alice: InMemorySignalProtocolStore
    var bob: InMemorySignalProtocolStore
    let aliceAddress = ProtocolAddress(name: "alice", deviceID: 1)
    let bobAddress = ProtocolAddress(name: "bob", deviceID: 1)
    var random = SystemRandomNumberGenerator()

    private init(alice: InMemorySignalProtocolStore, bob: InMemorySignalProtocolStore) {
        self.alice = alice
        self.bob = bob
    }

    /// Alice encrypts `plaintext`, Bob parses and decrypts it; returns its last byte.
    func roundTrip(_ plaintext: [UInt8]) -> UInt8 {
        do {
            let message = try SessionCipher.encrypt(plaintext, for: bobAddress, store: &alice)
            let parsed = try SignalMessage(serialized: message.serialized)
            let opened = try SessionCipher.decrypt(parsed, from: aliceAddress, store: &bob, using: &random)
            return opened[opened.count - 1]
        } catch {
            fatalError("Signal message failed in the benchmark: \(error)")
        }
    }

    static func established() throws -> SessionPair {
        let fixture = try SetupFixture(kyber: true)
        var alice = fixture.alice
        var bob = fixture.bob
        try SessionBuilder.process(fixture.bundle, for: fixture.bobAddress, store: &alice)
        let hello = try SessionCipher.encrypt([1], for: fixture.bobAddress, store: &alice)
        _ = try SessionCipher.decrypt(type: hello.type, body: hello.serialized, from: fixture.aliceAddress, store: &bob)
        let reply = try SessionCipher.encrypt([2], for: fixture.aliceAddress, store: &bob)
        _ = try SessionCipher.decrypt(type: reply.type, body: reply.serialized, from: fixture.bobAddress, store: &alice)
        return SessionPair(alice: alice, bob: bob)
    }
}

/// Fresh stores and Bob's bundle; every setup starts from copies of these values.
struct SetupFixture {
    let alice: InMemorySignalProtocolStore
    let bob: InMemorySignalProtocolStore
    let bundle: PreKeyBundle
    let bobPreKey: PreKeyRecord
    let bobSignedPreKey: SignedPreKeyRecord
    let bobKyberPreKey: KyberPreKeyRecord?
    let aliceAddress = ProtocolAddress(name: "alice", deviceID: 1)
    let bobAddress = ProtocolAddress(name: "bob", deviceID: 1)

    init(kyber: Bool) throws {
        var random = SystemRandomNumberGenerator()
        let aliceIdentity = IdentityKeyPair.generate()
        let bobIdentity = IdentityKeyPair.generate()
        alice = InMemorySignalProtocolStore(identity: aliceIdentity, registrationID: 1)
        var bob = InMemorySignalProtocolStore(identity: bobIdentity, registrationID: 2)
        bobSignedPreKey = SignedPreKeyRecord.generate(id: 1, timestamp: 0, identity: bobIdentity, using: &random)
        bobPreKey = PreKeyRecord(id: 1, keyPair: .generate())
        bobKyberPreKey =
            kyber
            ? try KyberPreKeyRecord.generate(id: 1, timestamp: 0, isLastResort: true, identity: bobIdentity, using: &random)
            : nil
        try bob.storeSignedPreKey(bobSignedPreKey)
        try bob.storePreKey(bobPreKey)
        if let bobKyberPreKey { try bob.storeKyberPreKey(bobKyberPreKey) }
        self.bob = bob
        bundle = PreKeyBundle(
            registrationID: 2, deviceID: 1, preKey: (bobPreKey.id, bobPreKey.keyPair.publicKey), signedPreKeyID: 1,
            signedPreKey: bobSignedPreKey.keyPair.publicKey, signedPreKeySignature: bobSignedPreKey.signature,
            identityKey: bobIdentity.identityKey,
            kyberPreKey: bobKyberPreKey.map { ($0.id, $0.keyPair.publicKey, $0.signature) })
    }

    /// One complete setup: Alice builds from the bundle and sends; Bob opens the pre-key message.
    func runOnce(_ plaintext: [UInt8]) throws -> UInt8 {
        var alice = self.alice
        var bob = self.bob
        try SessionBuilder.process(bundle, for: bobAddress, store: &alice)
        let message = try SessionCipher.encrypt(plaintext, for: bobAddress, store: &alice)
        let opened = try SessionCipher.decrypt(type: .preKey, body: message.serialized, from: aliceAddress, store: &bob)
        return opened[0]
    }
}

private let chainMessageSeed: [UInt8] = [0x01]
private let chainNextSeed: [UInt8] = [0x02]
private let messageKeysInfo = Array("WhisperMessageKeys".utf8)
private let rootInfo = Array("WhisperRatchet".utf8)

/// The primitive ceiling of one message: for each side, the chain step (two HMACs), the
/// message-key HKDF (80 bytes), AES-256-CBC, and the truncated HMAC-SHA256 over
/// `macInputCount` bytes — the same primitive calls our ratchet makes (HMAC/HKDF on
/// swift-crypto's SHA256, AES-CBC from swift-crypto), with no encoding and no state.
private struct MessageCeiling {
    let chainKey: [UInt8] = (0..<32).map { UInt8($0) &* 7 }
    let macInput: [UInt8]

    init(macInputCount: Int) {
        macInput = [UInt8](repeating: 0x33, count: macInputCount)
    }

    /// Sender then receiver, both derive the keys; returns a byte of the plaintext.
    func run(_ plaintext: [UInt8]) -> UInt8 {
        do {
            let sent = Self.keys(chainKey)
            let ciphertext = try AES._CBC.encrypt(
                plaintext, using: SymmetricKey(data: sent[0..<32]), iv: try AES._CBC.IV(ivBytes: sent[64..<80]))
            let tag = sent[32..<64].withUnsafeBytes { key in
                macInput.withUnsafeBytes { HMACSHA256.authenticationCode(key: key, message: $0) }
            }
            let received = Self.keys(chainKey)
            let check = received[32..<64].withUnsafeBytes { key in
                macInput.withUnsafeBytes { HMACSHA256.authenticationCode(key: key, message: $0) }
            }
            guard tag.prefix(8) == check.prefix(8) else { fatalError("MAC mismatch in ceiling") }
            let opened = try AES._CBC.decrypt(
                ciphertext, using: SymmetricKey(data: received[0..<32]), iv: try AES._CBC.IV(ivBytes: received[64..<80]))
            return opened[opened.startIndex]
        } catch {
            fatalError("AES-CBC failed in the ceiling: \(error)")
        }
    }

    /// Chain step and message keys: cipher key ‖ MAC key ‖ IV (80 bytes).
    static func keys(_ chainKey: [UInt8]) -> [UInt8] {
        chainKey.withUnsafeBytes { key in
            let seed = chainMessageSeed.withUnsafeBytes { HMACSHA256.authenticationCode(key: key, message: $0) }
            let next = chainNextSeed.withUnsafeBytes { HMACSHA256.authenticationCode(key: key, message: $0) }
            consume(next[0])
            var derived = [UInt8](repeating: 0, count: 80)
            seed.withUnsafeBytes { seed in
                messageKeysInfo.withUnsafeBytes { info in
                    derived.withUnsafeMutableBytes { output in
                        HKDFSHA256.derive(
                            inputKeyMaterial: seed, salt: UnsafeRawBufferPointer(start: nil, count: 0), info: info,
                            into: output)
                    }
                }
            }
            return derived
        }
    }
}

/// The primitive ceiling of one setup: the X25519 key generations and agreements, XEdDSA
/// verifications, HKDFs and Kyber operations both sides perform, plus one message.
private struct SetupCeiling {
    let fixture: SetupFixture
    let kyber: Bool
    let message = MessageCeiling(macInputCount: 66 + 140)

    init(fixture: SetupFixture, kyber: Bool) {
        self.fixture = fixture
        self.kyber = kyber
    }

    func run(_ plaintext: [UInt8]) -> UInt8 {
        let aliceIdentity = fixture.alice.identity.privateKey.key
        let bobIdentity = fixture.bob.identity.privateKey.key
        let bobSigned = fixture.bobSignedPreKey.keyPair.privateKey.key
        let bobOneTime = fixture.bobPreKey.keyPair.privateKey.key
        do {
            // Alice: verify the bundle, agree, derive, first ratchet step.
            guard XEdDSA.verify(
                fixture.bobSignedPreKey.signature, for: fixture.bobSignedPreKey.keyPair.publicKey.serialized,
                publicKey: fixture.bundle.identityKey.publicKey.rawRepresentation)
            else { fatalError("signature") }
            var kyberSecret = Data()
            var kyberCiphertext: [UInt8] = []
            if kyber, let record = fixture.bobKyberPreKey {
                guard XEdDSA.verify(
                    record.signature, for: record.keyPair.publicKey.serialized,
                    publicKey: fixture.bundle.identityKey.publicKey.rawRepresentation)
                else { fatalError("signature") }
                let result = try record.keyPair.publicKey.key.encapsulate()
                kyberSecret = result.sharedSecret.withUnsafeBytes { Data($0) }
                kyberCiphertext = result.ciphertext
            }
            let base = Curve25519.KeyAgreement.PrivateKey()
            var aliceInput = Data(repeating: 0xff, count: 32)
            for (key, peer) in [
                (aliceIdentity, bobSigned.publicKey), (base, bobIdentity.publicKey), (base, bobSigned.publicKey),
                (base, bobOneTime.publicKey),
            ] {
                aliceInput.append(try key.sharedSecretFromKeyAgreement(with: peer).withUnsafeBytes { Data($0) })
            }
            aliceInput.append(kyberSecret)
            let aliceRoot = fastHKDF(aliceInput, salt: [], count: kyber ? 96 : 64)
            let ratchet = Curve25519.KeyAgreement.PrivateKey()
            let step = try ratchet.sharedSecretFromKeyAgreement(with: bobSigned.publicKey)
            let aliceChain = fastHKDF(step.withUnsafeBytes { Data($0) }, salt: Array(aliceRoot[0..<32]), count: 64)
            consume(aliceChain[0])

            // Bob: decapsulate, agree, derive, ratchet step on receipt.
            var bobInput = Data(repeating: 0xff, count: 32)
            for (key, peer) in [
                (bobSigned, aliceIdentity.publicKey), (bobIdentity, base.publicKey), (bobSigned, base.publicKey),
                (bobOneTime, base.publicKey),
            ] {
                bobInput.append(try key.sharedSecretFromKeyAgreement(with: peer).withUnsafeBytes { Data($0) })
            }
            if kyber, let record = fixture.bobKyberPreKey {
                bobInput.append(try record.keyPair.privateKey.decapsulate(kyberCiphertext).withUnsafeBytes { Data($0) })
            }
            let bobRoot = fastHKDF(bobInput, salt: [], count: kyber ? 96 : 64)
            let receive = try bobSigned.sharedSecretFromKeyAgreement(with: ratchet.publicKey)
            let bobNew = Curve25519.KeyAgreement.PrivateKey()
            let send = try bobNew.sharedSecretFromKeyAgreement(with: ratchet.publicKey)
            for secret in [receive, send] {
                let chain = fastHKDF(secret.withUnsafeBytes { Data($0) }, salt: Array(bobRoot[0..<32]), count: 64)
                consume(chain[0])
            }
            return message.run(plaintext)
        } catch {
            fatalError("primitive failed in the setup ceiling: \(error)")
        }
    }
}

/// HKDF-SHA256 with the same implementation the ratchet uses (the "WhisperRatchet" label
/// stands in for every label: the cost does not depend on it).
private func fastHKDF(_ ikm: Data, salt: [UInt8], count: Int) -> [UInt8] {
    var output = [UInt8](repeating: 0, count: count)
    ikm.withUnsafeBytes { ikm in
        salt.withUnsafeBytes { salt in
            rootInfo.withUnsafeBytes { info in
                output.withUnsafeMutableBytes { HKDFSHA256.derive(inputKeyMaterial: ikm, salt: salt, info: info, into: $0) }
            }
        }
    }
    return output
}
