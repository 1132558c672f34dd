import Crypto
import InvisoCrypto
import InvisoTesting
import Testing

@Suite("CPace protocol runs")
struct CPaceTests {
    struct Inputs {
        var prs: [UInt8]
        var ci: [UInt8]
        var sid: [UInt8]
        var ada: [UInt8]
        var adb: [UInt8]

        init(seed: UInt64) {
            var random = SeededGenerator(seed: seed)
            prs = random.bytes(Int(random.next() % 200))  // also past one hash block
            ci = random.bytes(Int(random.next() % 40))
            sid = random.bytes(16)
            ada = random.bytes(Int(random.next() % 300))  // also two-byte LEB128 lengths
            adb = random.bytes(Int(random.next() % 20))
        }
    }

    static func pair(
        _ inputs: Inputs, roles: (CPace.Role, CPace.Role) = (.initiator, .responder), responderPRS: [UInt8]? = nil,
        seed: UInt64
    ) throws -> (CPace.Party, CPace.Party) {
        var random = SeededGenerator(seed: seed)
        let a = try CPace.Party(
            role: roles.0, prs: SecretBytes(inputs.prs), ci: inputs.ci, sid: inputs.sid, associatedData: inputs.ada,
            using: &random)
        let b = try CPace.Party(
            role: roles.1, prs: SecretBytes(responderPRS ?? inputs.prs), ci: inputs.ci, sid: inputs.sid,
            associatedData: inputs.adb, using: &random)
        return (a, b)
    }

    @Test("seeded round trips agree in both settings", arguments: 0..<24)
    func roundTrip(seed: UInt64) throws {
        let inputs = Inputs(seed: seed)
        for roles in [(CPace.Role.initiator, CPace.Role.responder), (.symmetric, .symmetric)] {
            var (a, b) = try Self.pair(inputs, roles: roles, seed: seed &+ 1000)
            #expect(a.share.count == 32 && a.share != b.share)
            let outputA = try a.receive(b.message)
            let outputB = try b.receive(a.message)
            #expect(outputA.intermediateSessionKey == outputB.intermediateSessionKey)
            #expect(outputA.intermediateSessionKey.count == CPace.keyByteCount)
            #expect(outputA.sessionIDOutput == outputB.sessionIDOutput)
            #expect(outputA.peerAssociatedData == inputs.adb && outputB.peerAssociatedData == inputs.ada)
            #expect(a.isFinished && b.isFinished)
        }
    }

    @Test("the system-random initialiser gives fresh shares that still agree")
    func systemRandom() throws {
        let prs = SecretBytes(Array("correct horse battery staple".utf8))
        var a = try CPace.Party(role: .initiator, prs: prs, ci: [1], sid: [2], associatedData: [3])
        var b = try CPace.Party(role: .responder, prs: prs, ci: [1], sid: [2], associatedData: [4])
        let again = try CPace.Party(role: .initiator, prs: prs, ci: [1], sid: [2], associatedData: [3])
        #expect(a.share != again.share)
        #expect(try a.receive(b.message).intermediateSessionKey == b.receive(a.message).intermediateSessionKey)
    }

    @Test("a wrong password, CI, sid, or role order gives unrelated keys", arguments: 0..<6)
    func mismatches(seed: UInt64) throws {
        let inputs = Inputs(seed: seed)
        func keys(_ a: inout CPace.Party, _ b: inout CPace.Party) throws -> (SecretBytes, SecretBytes) {
            let (ma, mb) = (a.message, b.message)
            return (try a.receive(mb).intermediateSessionKey, try b.receive(ma).intermediateSessionKey)
        }
        // Wrong password: no error (CPace has no key confirmation), different keys.
        var (a, b) = try Self.pair(inputs, responderPRS: inputs.prs + [0x21], seed: seed)
        var (keyA, keyB) = try keys(&a, &b)
        #expect(keyA != keyB)

        for change in 0..<3 {
            var random = SeededGenerator(seed: seed &+ 50)
            var other = inputs
            switch change {
            case 0: other.ci.append(1)
            case 1: other.sid[0] ^= 1
            default: break
            }
            var a = try CPace.Party(
                role: .initiator, prs: SecretBytes(inputs.prs), ci: inputs.ci, sid: inputs.sid,
                associatedData: inputs.ada, using: &random)
            // change 2: both claim the initiator role, so the transcripts differ.
            var b = try CPace.Party(
                role: change == 2 ? .initiator : .responder, prs: SecretBytes(inputs.prs), ci: other.ci,
                sid: other.sid, associatedData: inputs.adb, using: &random)
            (keyA, keyB) = try keys(&a, &b)
            #expect(keyA != keyB, "change \(change)")
        }
    }

    @Test("every flipped byte of the peer's message is rejected or changes the key; rejection changes nothing")
    func tamper() throws {
        let inputs = Inputs(seed: 7)
        for roles in [(CPace.Role.initiator, CPace.Role.responder), (.symmetric, .symmetric)] {
            var (a, b) = try Self.pair(inputs, roles: roles, seed: 77)
            let honest = try b.receive(a.message).intermediateSessionKey
            let message = b.message
            var rejected = 0
            for index in message.indices {
                for flip: UInt8 in [0x01, 0x80] {
                    var tampered = message
                    tampered[index] ^= flip
                    var probe = a
                    do {
                        let output = try probe.receive(tampered)
                        #expect(output.intermediateSessionKey != honest, "byte \(index) ^ \(flip)")
                    } catch {
                        rejected += 1
                        #expect(!probe.isFinished)
                        #expect(try probe.receive(message).intermediateSessionKey == honest)
                    }
                }
            }
            // The two length bytes cannot change without breaking the framing.
            #expect(rejected >= 4)
            #expect(try a.receive(message).intermediateSessionKey == honest)
        }
    }

    @Test("truncated, extended and non-minimal messages are malformed; state unchanged")
    func framing() throws {
        var (a, b) = try Self.pair(Inputs(seed: 3), seed: 3)
        let message = b.message
        var malformed: [[UInt8]] = (0..<message.count).map { Array(message.prefix($0)) }
        malformed.append(message + [0])
        // Y of 31 and 33 bytes, and the 32 written as the two-byte LEB128 a0 00.
        malformed.append(CPace.lvCat(Array(b.share.dropLast()), b.associatedData))
        malformed.append(CPace.lvCat(b.share + [0], b.associatedData))
        malformed.append([0xa0, 0x00] + b.share + CPace.prependLength(b.associatedData))
        // An AD length far past the end.
        malformed.append(CPace.prependLength(b.share) + [0xff, 0xff, 0xff, 0x7f])
        for bytes in malformed {
            #expect(throws: CPaceError.malformedMessage) { try a.receive(bytes) }
        }
        #expect(throws: CPaceError.malformedMessage) {
            try a.receive(share: [UInt8](repeating: 9, count: 31), associatedData: [])
        }
        #expect(!a.isFinished)
        let key = try a.receive(message).intermediateSessionKey
        #expect(key == (try b.receive(a.message).intermediateSessionKey))
    }

    @Test("a party derives one key only")
    func singleUse() throws {
        var (a, b) = try Self.pair(Inputs(seed: 4), seed: 4)
        _ = try a.receive(b.message)
        #expect(throws: CPaceError.alreadyFinished) { try a.receive(b.message) }
        #expect(throws: CPaceError.alreadyFinished) { try a.receive(share: b.share, associatedData: []) }
    }

    @Test("framed and unframed receive agree")
    func unframed() throws {
        var (a, b) = try Self.pair(Inputs(seed: 5), seed: 5)
        var copy = a
        let framed = try a.receive(b.message)
        let unframed = try copy.receive(share: b.share, associatedData: b.associatedData)
        #expect(framed.intermediateSessionKey == unframed.intermediateSessionKey)
        #expect(framed.sessionIDOutput == unframed.sessionIDOutput)
    }

    @Test("the generator depends on every input and on nothing else")
    func generator() {
        let prs = SecretBytes(Array("Password".utf8))
        let base = CPace.calculateGenerator(prs: prs, ci: [1], sid: [2])
        #expect(base == CPace.calculateGenerator(prs: prs, ci: [1], sid: [2]))
        #expect(base.count == 32)
        #expect(base != CPace.calculateGenerator(prs: SecretBytes(Array("password".utf8)), ci: [1], sid: [2]))
        #expect(base != CPace.calculateGenerator(prs: prs, ci: [1, 0], sid: [2]))
        #expect(base != CPace.calculateGenerator(prs: prs, ci: [1], sid: [2, 0]))
        // lv_cat keeps field boundaries: moving a byte from CI to sid changes g.
        #expect(
            CPace.calculateGenerator(prs: prs, ci: [1, 2], sid: [])
                != CPace.calculateGenerator(prs: prs, ci: [1], sid: [2]))
        // Long passwords (no zero padding left) still work.
        let long = SecretBytes([UInt8](repeating: 0x41, count: 300))
        #expect(CPace.zeroPaddingLength(prsByteCount: 300) == 0)
        #expect(CPace.calculateGenerator(prs: long, ci: [], sid: []).count == 32)
    }

    @Test("no description, debug description, dump or error shows a secret")
    func redaction() throws {
        let password = Array("hunter2-hunter2".utf8)
        let scalar = [UInt8](repeating: 0x5a, count: 32)
        var random = FixedBytesGenerator(scalar)
        var a = try CPace.Party(role: .initiator, prs: SecretBytes(password), associatedData: [7], using: &random)
        var b = try CPace.Party(role: .responder, prs: SecretBytes(password))
        let output = try a.receive(b.message)
        _ = try b.receive(a.message)
        let isk = output.intermediateSessionKey.withUnsafeBytes { Array($0) }
        let g = CPace.calculateGenerator(prs: SecretBytes(password), ci: [], sid: []).withUnsafeBytes { Array($0) }

        var texts = [
            "\(a)", String(reflecting: a), "\(b)", "\(output)", String(reflecting: output),
            "\(CPace.calculateGenerator(prs: SecretBytes(password), ci: [], sid: []))",
        ]
        for value in [a as Any, output as Any] {
            var dumped = ""
            dump(value, to: &dumped)
            texts.append(dumped)
        }
        for error in [CPaceError.malformedMessage, .invalidPeerShare, .invalidGenerator, .alreadyFinished] {
            texts.append("\(error)")
        }
        let secrets = [password, scalar, isk, g]
        for text in texts {
            for secret in secrets {
                #expect(!text.contains(secret.hex), "\(text)")
                #expect(!text.contains(String(decoding: password, as: UTF8.self)), "\(text)")
                // Decimal byte lists, as default reflection would print them.
                #expect(!text.contains(secret.prefix(4).map { String($0) }.joined(separator: ", ")), "\(text)")
            }
        }
        #expect(texts[0] == "CPace.Party(role: initiator, finished: true)")
    }
}
