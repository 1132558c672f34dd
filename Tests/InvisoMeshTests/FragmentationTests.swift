import InvisoMesh
import InvisoTesting
import Testing

@Suite("Fragmentation and reassembly")
struct FragmentationTests {
    /// A v1 broadcast packet whose encoding is exactly `size` bytes (22 bytes of framing).
    static func packet(encodedSize size: Int, seed: UInt64 = 1) -> MeshPacket {
        var generator = SeededGenerator(seed: seed)
        return MeshPacket(
            type: .message, ttl: 6, timestamp: 1_750_000_000_000, senderID: PeerID(rawValue: 0xAB),
            payload: generator.bytes(size - 22), isRSR: true)
    }

    @Test(
        "split and reassemble at several sizes, including exact multiples of 469",
        arguments: [513, 938, 469 * 3, 469 * 3 + 1, 469 * 4 - 1, 5_000, 65_557])
    func roundTrip(size: Int) throws {
        let original = Self.packet(encodedSize: size)
        let encoded = try original.encoded()
        #expect(encoded.count == size)
        #expect(Fragmenter.needsFragmentation(encodedSize: size))
        let fragments = try Fragmenter().fragments(of: original, encoded: encoded, fragmentID: 0x1122_3344_5566_7788)
        #expect(fragments.count == (size + 468) / 469)
        for (index, fragment) in fragments.enumerated() {
            #expect(fragment.type == .fragment && fragment.version == 1 && fragment.signature == nil)
            #expect(fragment.ttl == original.ttl && fragment.timestamp == original.timestamp && fragment.isRSR)
            #expect(fragment.senderID == original.senderID && fragment.recipientID == nil && fragment.route == nil)
            let payload = try FragmentPayload(decoding: fragment.payload)
            #expect(payload.header.fragmentID == 0x1122_3344_5566_7788 && Int(payload.header.index) == index)
            #expect(Int(payload.header.total) == fragments.count && payload.header.originalType == .message)
            #expect(payload.chunk.count == (index < fragments.count - 1 ? 469 : size - 469 * (fragments.count - 1)))
            // Each fragment fits BLE's 512-byte budget.
            #expect(try fragment.encoded().count <= 512)
        }
        var reassembler = Reassembler()
        var result: [UInt8]?
        for fragment in try fragments.map({ try MeshPacket.decode(try $0.encoded()) }) {
            #expect(result == nil)
            result = try reassembler.receive(fragment, now: 1_000)
        }
        #expect(result == encoded)
        #expect(try MeshPacket.decode(try #require(result)) == original)
        #expect(reassembler.activeReassemblies == 0 && reassembler.bufferedBytes == 0)
    }

    @Test("shuffled and duplicated fragments, interleaved sets, padded and routed originals")
    func shuffledAndDuplicated() throws {
        var generator = SeededGenerator(seed: 0xF4A6)
        for round in 0..<50 {
            var originals: [MeshPacket] = []
            var all: [MeshPacket] = []
            for set in 0..<3 {
                var packet = generator.packet(maxPayload: 4_000)
                packet.isCompressed = false
                let padded = set == 1
                originals.append(packet)
                all += try Fragmenter(chunkSize: generator.int(64...469)).fragments(of: packet, padded: padded, using: &generator)
            }
            all += all.filter { _ in generator.next() % 3 == 0 }
            all.shuffle(using: &generator)
            var reassembler = Reassembler()
            var completed: [MeshPacket] = []
            for fragment in all {
                if fragment.route != nil { #expect(fragment.version == 2) }
                if let bytes = try reassembler.receive(fragment, now: UInt64(round)) {
                    completed.append(try MeshPacket.decode(bytes))
                }
            }
            #expect(Set(completed) == Set(originals) && completed.count == 3)
            #expect(reassembler.activeReassemblies == 0 && reassembler.bufferedBytes == 0)
        }
    }

    @Test("a set times out 30 s after its first fragment")
    func timeout() throws {
        let original = Self.packet(encodedSize: 1_500)
        let fragments = try Fragmenter().fragments(of: original, encoded: try original.encoded(), fragmentID: 7)
        var reassembler = Reassembler()
        #expect(try reassembler.receive(fragments[0], now: 1_000) == nil)
        #expect(try reassembler.receive(fragments[1], now: 30_999) == nil)
        reassembler.removeExpired(now: 30_999)
        #expect(reassembler.activeReassemblies == 1)
        // At 31 s the set (started at 1 s) is gone; the rest start a new set that cannot finish.
        #expect(try reassembler.receive(fragments[2], now: 31_000) == nil)
        #expect(try reassembler.receive(fragments[3], now: 31_000) == nil)
        #expect(reassembler.activeReassemblies == 1 && reassembler.bufferedBytes == fragments[2...3].reduce(0) {
            $0 + $1.payload.count - FragmentHeader.size
        })
        reassembler.removeExpired(now: 61_000)
        #expect(reassembler.activeReassemblies == 0 && reassembler.bufferedBytes == 0)
        // Late copies of a completed set are ignored for the timeout, then forgotten.
        var fresh = Reassembler()
        for fragment in fragments { _ = try fresh.receive(fragment, now: 0) }
        #expect(try fresh.receive(fragments[0], now: 29_999) == nil)
        #expect(fresh.activeReassemblies == 0)
        #expect(try fresh.receive(fragments[0], now: 30_000) == nil)
        #expect(fresh.activeReassemblies == 1)
        // A clock that goes backwards expires nothing.
        _ = try reassembler.receive(fragments[0], now: 100_000)
        reassembler.removeExpired(now: 5)
        #expect(reassembler.activeReassemblies == 1)
    }

    static func fragment(id: UInt64, index: UInt16, total: UInt16, type: MessageType = .message, chunk: [UInt8] = [1, 2, 3])
        -> FragmentPayload
    {
        FragmentPayload(header: FragmentHeader(fragmentID: id, index: index, total: total, originalType: type), chunk: chunk)
    }

    @Test("limits and contradictions are rejected without changing the state")
    func rejections() throws {
        let sender = PeerID(rawValue: 1)
        var reassembler = Reassembler()
        for id in 0..<128 { _ = try reassembler.receive(Self.fragment(id: UInt64(id), index: 0, total: 2), from: sender, now: 0) }
        #expect(reassembler.activeReassemblies == 128)
        let full = reassembler
        func expectRejected(_ error: MeshWireError, _ fragment: FragmentPayload, from peer: PeerID = sender) {
            var copy = reassembler
            #expect(throws: error) { try copy.receive(fragment, from: peer, now: 0) }
            #expect(copy == reassembler, "state changed")
        }
        expectRejected(.reassemblyLimit, Self.fragment(id: 500, index: 0, total: 2))
        // The same ID from another sender is another set: also over the limit.
        expectRejected(.reassemblyLimit, Self.fragment(id: 0, index: 0, total: 2), from: PeerID(rawValue: 2))
        expectRejected(.conflictingFragment, Self.fragment(id: 0, index: 1, total: 3))
        expectRejected(.conflictingFragment, Self.fragment(id: 0, index: 1, total: 2, type: .announce))
        expectRejected(.conflictingFragment, Self.fragment(id: 0, index: 0, total: 2, chunk: [9]))
        expectRejected(.invalidField, Self.fragment(id: 0, index: 2, total: 2))
        expectRejected(.invalidField, Self.fragment(id: 0, index: 0, total: 0))
        expectRejected(.invalidField, Self.fragment(id: 0, index: 1, total: 2, chunk: []))
        // An exact duplicate is accepted and ignored.
        #expect(try reassembler.receive(Self.fragment(id: 0, index: 0, total: 2), from: sender, now: 0) == nil)
        #expect(reassembler == full)
        // Completing a set frees a slot.
        #expect(try reassembler.receive(Self.fragment(id: 0, index: 1, total: 2), from: sender, now: 0) == [1, 2, 3, 1, 2, 3])
        #expect(reassembler.activeReassemblies == 127)

        // The byte budget.
        var small = Reassembler(limits: .init(maxConcurrentReassemblies: 4, timeoutMilliseconds: 1_000, maxBufferedBytes: 10))
        _ = try small.receive(Self.fragment(id: 1, index: 0, total: 3, chunk: [UInt8](repeating: 0, count: 6)), from: sender, now: 0)
        let before = small
        #expect(throws: MeshWireError.reassemblyLimit) {
            try small.receive(Self.fragment(id: 1, index: 1, total: 3, chunk: [UInt8](repeating: 0, count: 5)), from: sender, now: 0)
        }
        #expect(throws: MeshWireError.reassemblyLimit) {
            try small.receive(Self.fragment(id: 2, index: 0, total: 11, chunk: [0]), from: sender, now: 0)
        }
        #expect(small == before && small.bufferedBytes == 6)

        // Found by the fuzzer: a packet rejected before its payload is read still expires old
        // sets first, like every other call, so a rejection never leaves expired sets behind.
        var expiring = Reassembler()
        _ = try expiring.receive(Self.fragment(id: 1, index: 0, total: 2), from: sender, now: 0)
        #expect(throws: MeshWireError.notAFragment) {
            try expiring.receive(MeshPacket(type: .message, ttl: 1, timestamp: 0, senderID: sender, payload: []), now: 30_000)
        }
        #expect(expiring.activeReassemblies == 0 && expiring.bufferedBytes == 0)

        // Packets that are not fragments, and short fragment payloads.
        let notFragment = MeshPacket(type: .message, ttl: 1, timestamp: 0, senderID: sender, payload: [1])
        #expect(throws: MeshWireError.notAFragment) { try reassembler.receive(notFragment, now: 0) }
        let short = MeshPacket(type: .fragment, ttl: 1, timestamp: 0, senderID: sender, payload: [UInt8](repeating: 0, count: 12))
        #expect(throws: MeshWireError.truncated) { try reassembler.receive(short, now: 0) }
    }

    @Test("a fragment whose payload arrives compressed (iOS compresses low-entropy payloads)")
    func compressedFragment() throws {
        let payload = Self.fragment(id: 9, index: 0, total: 1, chunk: Array("abc".utf8)).encoded()
        // A single stored DEFLATE block: BFINAL 1, type 00, LEN, NLEN, data.
        let count = UInt16(payload.count)
        let stream = [0x01, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8(~count >> 8)] + payload
        let packet = MeshPacket(
            type: .fragment, ttl: 1, timestamp: 0, senderID: PeerID(rawValue: 1), payload: [0, UInt8(count)] + stream,
            isCompressed: true)
        var reassembler = Reassembler()
        #expect(try reassembler.receive(packet, now: 0) == Array("abc".utf8))
    }
}
