import InvisoCrypto
import InvisoWire
import NIOCore
import Testing

@testable import InvisoKit

@Suite("Direct framing and candidates")
struct DirectFramingTests {
    static func frame(_ body: [UInt8]) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt32(body.count))
        buffer.writeBytes(body)
        return buffer
    }

    @Test("Bodies come out whole, also when split across reads")
    func splits() throws {
        var decoder = DirectFrameDecoder(side: .dialer, maxBodyBytes: 100)
        var stream = Self.frame([1, 2, 3])
        stream.writeImmutableBuffer(Self.frame(Array(repeating: 7, count: 90)))
        var pending = ByteBuffer()
        var bodies: [[UInt8]] = []
        while stream.readableBytes > 0 {
            pending.writeBytes(stream.readBytes(length: min(5, stream.readableBytes))!)
            while let body = try decoder.decode(buffer: &pending) { bodies.append(Array(body.readableBytesView)) }
        }
        #expect(bodies == [[1, 2, 3], Array(repeating: 7, count: 90)])
    }

    @Test("Before authentication a length above 64 is refused at once, without waiting for the body")
    func handshakeLimit() throws {
        var acceptor = DirectFrameDecoder(side: .acceptor, maxBodyBytes: 1 << 20)
        var lying = ByteBuffer(bytes: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: DirectError.protocolViolation) { try acceptor.decode(buffer: &lying) }
        var atLimit = Self.frame(Array(repeating: 0, count: 64))
        var fresh = DirectFrameDecoder(side: .acceptor, maxBodyBytes: 1 << 20)
        let body = try fresh.decode(buffer: &atLimit)
        #expect(body?.readableBytes == 64)
        var over = ByteBuffer(bytes: [0, 0, 0, 65])
        #expect(throws: DirectError.protocolViolation) { try fresh.decode(buffer: &over) }
    }

    @Test("After the handshake messages, the frame limit applies", arguments: [DirectHandshake.Side.dialer, .acceptor])
    func frameLimit(side: DirectHandshake.Side) throws {
        var decoder = DirectFrameDecoder(side: side, maxBodyBytes: 200)
        for _ in 0..<(side == .acceptor ? 2 : 1) {
            var handshake = Self.frame(Array(repeating: 1, count: 32))
            let body = try decoder.decode(buffer: &handshake)
            #expect(body?.readableBytes == 32)
        }
        var big = Self.frame(Array(repeating: 2, count: 200))
        let bigBody = try decoder.decode(buffer: &big)
        #expect(bigBody?.readableBytes == 200)
        var tooBig = ByteBuffer(bytes: [0, 0, 0, 201])
        #expect(throws: DirectError.frameTooLarge) { try decoder.decode(buffer: &tooBig) }
        var partial = ByteBuffer(bytes: [0, 0, 0, 10, 1, 2])
        let none = try decoder.decode(buffer: &partial)
        #expect(none == nil && partial.readableBytes == 6)
    }

    @Test("Sealed file chunks go without a tag and outside the sequence; tagged frames around them still verify")
    func sealedChunksSkipTheFrameTag() throws {
        var generator = SystemRandomNumberGenerator()
        let creator = SecretBytes(randomCount: 32, using: &generator)
        let joiner = SecretBytes(randomCount: 32, using: &generator)
        var sender = DirectFrameProtector(sendKey: creator, receiveKey: joiner)
        var receiver = DirectFrameProtector(sendKey: joiner, receiveKey: creator)
        let chunk = FileChunkFrame(transfer: FileTransferID(), index: 3, sealed: Array(repeating: 9, count: 64)).encoded()
        #expect(DirectFrameKind.carrying(chunk) == .sealedChunk)
        #expect(DirectFrameKind.carrying([0x03, 1, 2]) == .data)
        var buffer = ByteBuffer()
        sender.seal(kind: .data, payload: [0x03, 1], into: &buffer)
        sender.seal(kind: .sealedChunk, payload: chunk, into: &buffer)
        sender.seal(kind: .data, payload: [0x03, 2], into: &buffer)
        var bodies: [ByteBuffer] = []
        while let length = buffer.readInteger(as: UInt32.self), let body = buffer.readSlice(length: Int(length)) { bodies.append(body) }
        #expect(bodies.count == 3 && bodies[1].readableBytes == 1 + chunk.count)
        #expect(try receiver.open(bodies[0]).payload == [0x03, 1])
        let opened = try receiver.open(bodies[1])
        #expect(opened.kind == .sealedChunk && opened.payload == chunk)
        // The chunk took no sequence number: the next tagged frame still verifies.
        #expect(try receiver.open(bodies[2]).payload == [0x03, 2])
        // A "sealed chunk" that is not a chunk frame is a violation (it cannot smuggle a
        // message of the channel past the tag).
        for bad: [UInt8] in [[0x02], [0x02, 0x03, 1, 2], [0x02, 0x01]] {
            var body = ByteBuffer()
            body.writeBytes(bad)
            #expect(throws: DirectError.self) { try receiver.open(body) }
        }
    }

    @Test("A specific bound address is the only candidate")
    func specificAddress() {
        let candidates = DirectCandidates.gather(
            boundAddress: "127.0.0.1", port: 4242, interfaceAddresses: ["192.168.1.5", "::1"])
        #expect(candidates == [.init(host: "127.0.0.1", port: 4242)])
    }

    @Test("0.0.0.0 lists IPv4 interface addresses, loopback last, without duplicates")
    func wildcardV4() {
        let candidates = DirectCandidates.gather(
            boundAddress: "0.0.0.0", port: 9,
            interfaceAddresses: ["127.0.0.1", "10.0.0.2", "fe80::1", "2001:db8::5", "10.0.0.2", "172.17.0.1"])
        #expect(candidates.map(\.host) == ["10.0.0.2", "172.17.0.1", "127.0.0.1"])
        #expect(candidates.allSatisfy { $0.port == 9 && $0.transport == "tcp" })
    }

    @Test(":: lists IPv4 then global IPv6, skips link-local IPv6, loopback last")
    func wildcardV6() {
        let candidates = DirectCandidates.gather(
            boundAddress: "::", port: 9,
            interfaceAddresses: ["::1", "FE80::abcd", "2001:db8::5", "127.0.0.1", "10.0.0.2", "fe80::1%eth0"])
        #expect(candidates.map(\.host) == ["10.0.0.2", "2001:db8::5", "::1", "127.0.0.1"])
    }

    @Test("Dial targets: tcp only, valid ports, no duplicates, capped")
    func dialTargets() {
        let candidates: [TransportCandidates.Candidate] = [
            .init(host: "10.0.0.1", port: 1), .init(transport: "udp", host: "10.0.0.2", port: 2),
            .init(host: "10.0.0.1", port: 1), .init(host: "", port: 3), .init(host: "10.0.0.4", port: 0),
            .init(transport: "TCP", host: "10.0.0.5", port: 5), .init(host: "10.0.0.6", port: 6),
        ]
        let targets = DirectConnector.dialTargets(candidates, limit: 2)
        #expect(targets.map(\.host) == ["10.0.0.1", "10.0.0.5"])
    }
}
