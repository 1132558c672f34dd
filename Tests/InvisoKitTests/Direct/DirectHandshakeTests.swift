import InvisoCrypto
import NIOCore
import Testing

@testable import InvisoKit

@Suite("Direct handshake and frame protection")
struct DirectHandshakeTests {
    static let key = SecretBytes((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) })
    static let otherKey = SecretBytes((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 3) })

    /// The dialer's first message (required).
    static func start(_ handshake: inout DirectHandshake) throws -> [UInt8] {
        let message = handshake.start()
        return try #require(message)
    }

    static func nonce(_ seed: UInt8) -> [UInt8] { (0..<32).map { UInt8(truncatingIfNeeded: Int($0) * 31 + Int(seed)) } }

    /// Runs a full handshake; returns both machines.
    static func handshake(
        dialer: V2Pairing.Role, dialerKey: SecretBytes = key, acceptorKey: SecretBytes = key
    ) throws -> (DirectHandshake, DirectHandshake) {
        var d = DirectHandshake(key: dialerKey, role: dialer, side: .dialer, nonce: nonce(1))
        var a = DirectHandshake(key: acceptorKey, role: dialer.peer, side: .acceptor, nonce: nonce(2))
        let msg1 = try Self.start(&d)
        let out2 = try a.receive(msg1)
        let msg2 = try #require(out2.reply)
        #expect(!out2.established)
        let out3 = try d.receive(msg2)
        #expect(out3.established)
        let msg3 = try #require(out3.reply)
        let outA = try a.receive(msg3)
        #expect(outA.established && outA.reply == nil)
        return (d, a)
    }

    @Test("Both sides establish, whichever role dials; frames open both ways", arguments: [V2Pairing.Role.creator, .joiner])
    func establishes(dialer: V2Pairing.Role) throws {
        let (d, a) = try Self.handshake(dialer: dialer)
        #expect(d.state == .established && a.state == .established)
        var dFrames = try #require(d.frameKeys())
        var aFrames = try #require(a.frameKeys())
        for index in 0..<5 {
            var buffer = ByteBuffer()
            dFrames.seal(kind: .data, payload: [UInt8(index), 9, 9], into: &buffer)
            #expect(buffer.readInteger(as: UInt32.self) == UInt32(3 + DirectWire.frameOverhead))
            let opened = try aFrames.open(buffer)
            #expect(opened.kind == .data && opened.payload == [UInt8(index), 9, 9])
            var back = ByteBuffer()
            aFrames.seal(kind: .selected, payload: [], into: &back)
            back.moveReaderIndex(forwardBy: 4)
            let control = try dFrames.open(back)
            #expect(control.kind == .selected && control.payload.isEmpty)
        }
    }

    @Test("Message sizes are 36, 64 and 32 bytes; msg1 starts with the magic")
    func sizes() throws {
        var d = DirectHandshake(key: Self.key, role: .creator, side: .dialer, nonce: Self.nonce(1))
        var a = DirectHandshake(key: Self.key, role: .joiner, side: .acceptor, nonce: Self.nonce(2))
        let msg1 = try Self.start(&d)
        #expect(msg1.count == 36 && Array(msg1.prefix(4)) == Array("IVD1".utf8))
        let out2 = try a.receive(msg1)
        let msg2 = try #require(out2.reply)
        #expect(msg2.count == 64 && Array(msg2.prefix(32)) == Self.nonce(2))
        let out3 = try d.receive(msg2)
        let msg3 = try #require(out3.reply)
        #expect(msg3.count == 32)
        #expect(a.start() == nil)
    }

    @Test("A wrong key fails the dialer at msg2 and the acceptor at msg3")
    func wrongKey() throws {
        var d = DirectHandshake(key: Self.key, role: .creator, side: .dialer, nonce: Self.nonce(1))
        var a = DirectHandshake(key: Self.otherKey, role: .joiner, side: .acceptor, nonce: Self.nonce(2))
        let msg1 = try Self.start(&d)
        let out = try a.receive(msg1)
        let msg2 = try #require(out.reply)
        #expect(throws: DirectError.authenticationFailed) { try d.receive(msg2) }
        #expect(d.state == .failed && d.frameKeys() == nil)

        // The acceptor's check: msg3 from a dialer that got msg2 from a same-nonce acceptor
        // under another key (what a man in the middle holding the wrong key could produce).
        var d3 = DirectHandshake(key: Self.otherKey, role: .creator, side: .dialer, nonce: Self.nonce(3))
        var a2 = DirectHandshake(key: Self.key, role: .joiner, side: .acceptor, nonce: Self.nonce(4))
        var forged = DirectHandshake(key: Self.otherKey, role: .joiner, side: .acceptor, nonce: Self.nonce(4))
        let dial1 = try Self.start(&d3)
        _ = try a2.receive(dial1)
        let forged2 = try forged.receive(dial1)
        let d3Out = try d3.receive(try #require(forged2.reply))
        let m3 = try #require(d3Out.reply)
        #expect(throws: DirectError.authenticationFailed) { try a2.receive(m3) }
        #expect(a2.state == .failed && a2.frameKeys() == nil)
    }

    @Test("Both sides with the same role fail (no self-connection)")
    func sameRole() throws {
        var d = DirectHandshake(key: Self.key, role: .creator, side: .dialer, nonce: Self.nonce(1))
        var a = DirectHandshake(key: Self.key, role: .creator, side: .acceptor, nonce: Self.nonce(2))
        let msg1 = try Self.start(&d)
        let out = try a.receive(msg1)
        let msg2 = try #require(out.reply)
        #expect(throws: DirectError.authenticationFailed) { try d.receive(msg2) }
    }

    @Test("Reflection: the acceptor's own MAC sent back as msg3 fails")
    func reflection() throws {
        var d = DirectHandshake(key: Self.key, role: .joiner, side: .dialer, nonce: Self.nonce(1))
        var a = DirectHandshake(key: Self.key, role: .creator, side: .acceptor, nonce: Self.nonce(2))
        let msg1 = try Self.start(&d)
        let out = try a.receive(msg1)
        let msg2 = try #require(out.reply)
        #expect(throws: DirectError.authenticationFailed) { try a.receive(Array(msg2.suffix(32))) }
        // A dialer's own msg1 sent back to it is malformed as a msg2.
        var d2 = DirectHandshake(key: Self.key, role: .joiner, side: .dialer, nonce: Self.nonce(5))
        let reflected = try Self.start(&d2)
        #expect(throws: DirectError.protocolViolation) { try d2.receive(reflected) }
    }

    @Test("Replay: a recorded dialer transcript fails against a fresh acceptor nonce")
    func replay() throws {
        var d = DirectHandshake(key: Self.key, role: .joiner, side: .dialer, nonce: Self.nonce(1))
        var a = DirectHandshake(key: Self.key, role: .creator, side: .acceptor, nonce: Self.nonce(2))
        let msg1 = try Self.start(&d)
        let aOut = try a.receive(msg1)
        let dOut = try d.receive(try #require(aOut.reply))
        let msg3 = try #require(dOut.reply)
        _ = try a.receive(msg3)
        var fresh = DirectHandshake(key: Self.key, role: .creator, side: .acceptor, nonce: Self.nonce(9))
        _ = try fresh.receive(msg1)
        #expect(throws: DirectError.authenticationFailed) { try fresh.receive(msg3) }
        // And a recorded msg2 does not authenticate to a dialer with a fresh nonce.
        var freshD = DirectHandshake(key: Self.key, role: .joiner, side: .dialer, nonce: Self.nonce(8))
        _ = freshD.start()
        var a2 = DirectHandshake(key: Self.key, role: .creator, side: .acceptor, nonce: Self.nonce(2))
        let a2Out = try a2.receive(msg1)
        let recorded2 = try #require(a2Out.reply)
        #expect(throws: DirectError.authenticationFailed) { try freshD.receive(recorded2) }
    }

    @Test("Malformed messages are protocol violations; anything after the end is too")
    func malformed() throws {
        var a = DirectHandshake(key: Self.key, role: .creator, side: .acceptor, nonce: Self.nonce(2))
        #expect(throws: DirectError.protocolViolation) { try a.receive(Array("XVD1".utf8) + Self.nonce(1)) }
        var a2 = DirectHandshake(key: Self.key, role: .creator, side: .acceptor, nonce: Self.nonce(2))
        #expect(throws: DirectError.protocolViolation) { try a2.receive(Array("IVD1".utf8) + Self.nonce(1).dropLast()) }
        var d = DirectHandshake(key: Self.key, role: .joiner, side: .dialer, nonce: Self.nonce(1))
        #expect(throws: DirectError.protocolViolation) { try d.receive([UInt8](repeating: 0, count: 64)) }
        let (done, _) = try Self.handshake(dialer: .joiner)
        var established = done
        #expect(throws: DirectError.protocolViolation) { try established.receive([UInt8](repeating: 0, count: 32)) }
        #expect(established.state == .failed)
    }

    @Test("Every flipped byte of a frame is rejected; so are replays, reorders and reflections")
    func frameTamper() throws {
        let (d, a) = try Self.handshake(dialer: .creator)
        var sender = try #require(d.frameKeys())
        let receiver = try #require(a.frameKeys())
        var first = ByteBuffer()
        sender.seal(kind: .data, payload: Array("hello".utf8), into: &first)
        first.moveReaderIndex(forwardBy: 4)
        var second = ByteBuffer()
        sender.seal(kind: .data, payload: Array("world".utf8), into: &second)
        second.moveReaderIndex(forwardBy: 4)
        var flips = 0
        for index in 0..<first.readableBytes {
            var copy = first
            let byte = copy.getInteger(at: copy.readerIndex + index, as: UInt8.self)!
            copy.setInteger(byte ^ 0x01, at: copy.readerIndex + index)
            var fresh = receiver
            #expect(throws: DirectError.authenticationFailed) { try fresh.open(copy) }
            flips += 1
        }
        #expect(flips == 5 + DirectWire.frameOverhead)
        var inOrder = receiver
        #expect(throws: DirectError.authenticationFailed) { try inOrder.open(second) }  // reordered
        let hello = try inOrder.open(first)
        #expect(hello.payload == Array("hello".utf8))
        #expect(throws: DirectError.authenticationFailed) { try inOrder.open(first) }  // replayed
        var reflected = try #require(d.frameKeys())
        #expect(throws: DirectError.authenticationFailed) { try reflected.open(first) }  // own frame back
        var short = receiver
        #expect(throws: DirectError.protocolViolation) { try short.open(ByteBuffer(bytes: [0, 1, 2])) }
    }

    @Test("Descriptions carry no key material")
    func redacted() throws {
        let handshake = DirectHandshake(key: Self.key, role: .creator, side: .dialer, nonce: Self.nonce(1))
        #expect("\(handshake)" == "DirectHandshake(creator, dialer, idle)")
        #expect("\(DirectError.authenticationFailed)" == "direct connection authentication failed")
    }
}
