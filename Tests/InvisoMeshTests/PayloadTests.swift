import InvisoMesh
import InvisoTesting
import Testing

@Suite("Payload codecs")
struct PayloadTests {
    /// Every strict prefix of `bytes` must fail to decode.
    static func expectEveryTruncationFails(_ bytes: [UInt8], _ decode: ([UInt8]) throws -> Void) {
        for length in 0..<bytes.count {
            #expect(throws: MeshWireError.self, "prefix \(length) of \(bytes.count)") { try decode(Array(bytes.prefix(length))) }
        }
    }

    @Test("chat messages: seeded round trips, truncation, the 0x40 and 0x80 flags")
    func chatMessages() throws {
        var generator = SeededGenerator(seed: 0xC4A7)
        for _ in 0..<500 {
            let channel = generator.bool() ? generator.text(maxBytes: 20) : nil
            let message = ChatMessage(
                id: generator.text(maxBytes: 40), sender: generator.text(maxBytes: 30), content: generator.text(maxBytes: 300),
                timestamp: generator.next(), isRelay: generator.bool(), isPrivate: generator.bool(),
                originalSender: generator.bool() ? generator.text(maxBytes: 10) : nil,
                recipientNickname: generator.bool() ? generator.text(maxBytes: 10) : nil,
                senderPeerID: generator.bool() ? generator.peer().description : nil,
                mentions: (0..<generator.int(0...3)).map { _ in generator.text(maxBytes: 8) }, channel: channel,
                isBridged: channel == nil && generator.bool(), encryptedContent: generator.bool() ? generator.bytes(generator.int(0...40)) : nil)
            let bytes = try message.encoded()
            var expected = message
            if expected.encryptedContent != nil { expected.content = "" }
            #expect(try ChatMessage(decoding: bytes) == expected)
            // With a channel, the prefix that drops exactly the channel field reads as iOS's
            // isBridged; every other prefix fails.
            for length in 0..<bytes.count {
                if let decoded = try? ChatMessage(decoding: bytes.prefix(length)) {
                    #expect(channel != nil && decoded.isBridged && decoded.channel == nil, "prefix \(length) decoded")
                }
            }
            #expect(throws: MeshWireError.trailingBytes) { try ChatMessage(decoding: bytes + (channel == nil && !message.isBridged ? [0] : [0, 0])) }
        }
        // iOS isBridged: flag 0x40 with nothing after it.
        let bridged = ChatMessage(id: "i", sender: "s", content: "c", timestamp: 1, isBridged: true)
        let bytes = try bridged.encoded()
        #expect(bytes[0] == 0x40 && bytes.count == 1 + 8 + 2 + 2 + 3)
        #expect(try ChatMessage(decoding: bytes) == bridged)
        // Strictness: invalid UTF-8, empty mentions list, oversize fields.
        var badUTF8 = try ChatMessage(id: "i", sender: "s", content: "c", timestamp: 1).encoded()
        badUTF8[badUTF8.count - 1] = 0xFF
        #expect(throws: MeshWireError.invalidUTF8) { try ChatMessage(decoding: badUTF8) }
        var emptyMentions = try ChatMessage(id: "i", sender: "s", content: "c", timestamp: 1).encoded()
        emptyMentions[0] = 0x20
        #expect(throws: MeshWireError.invalidField) { try ChatMessage(decoding: emptyMentions + [0]) }
        #expect(throws: MeshWireError.tooLarge) {
            try ChatMessage(id: String(repeating: "x", count: 256), sender: "s", content: "", timestamp: 0).encoded()
        }
        #expect(throws: MeshWireError.tooLarge) {
            try ChatMessage(id: "i", sender: "s", content: String(repeating: "x", count: 65_536), timestamp: 0).encoded()
        }
    }

    @Test("private messages, Noise payloads, leave payloads")
    func smallPayloads() throws {
        var generator = SeededGenerator(seed: 0x9A1)
        for _ in 0..<300 {
            let message = PrivateMessagePacket(messageID: generator.text(maxBytes: 255), content: generator.text(maxBytes: 255))
            let bytes = try message.encoded()
            #expect(try PrivateMessagePacket(decoding: bytes) == message)
            Self.expectEveryTruncationFails(bytes) { _ = try PrivateMessagePacket(decoding: $0) }
            let noise = NoisePayload(type: NoisePayloadType(rawValue: UInt8(truncatingIfNeeded: generator.next())), data: bytes)
            #expect(try NoisePayload(decoding: noise.encoded()) == noise)
            #expect(noise.encoded().first != NoisePayloadType.prereleaseFileTransferValue)
        }
        // Content order does not matter; duplicates, unknown TLVs and trailing bytes do.
        #expect(try PrivateMessagePacket(decoding: [0x01, 0x01, 0x61, 0x00, 0x01, 0x62]) == PrivateMessagePacket(messageID: "b", content: "a"))
        #expect(throws: MeshWireError.duplicateField) { try PrivateMessagePacket(decoding: [0, 0, 0, 0, 1, 0]) }
        #expect(throws: MeshWireError.invalidField) { try PrivateMessagePacket(decoding: [0, 0, 1, 0, 2, 0]) }
        #expect(throws: MeshWireError.truncated) { try PrivateMessagePacket(decoding: [0, 0, 1, 0, 2]) }
        #expect(throws: MeshWireError.tooLarge) {
            try PrivateMessagePacket(messageID: "m", content: String(repeating: "x", count: 256)).encoded()
        }
        #expect(throws: MeshWireError.truncated) { try NoisePayload(decoding: []) }
        #expect(NoisePayloadType(rawValue: 0x09) == .fileTransfer)
        #expect(NoisePayloadType.authenticatedPeerState.rawValue == 0x21 && NoisePayloadType.delivered.rawValue == 0x03)

        #expect(try LeavePayload(decoding: []) == LeavePayload())
        #expect(try LeavePayload().encoded() == [])
        #expect(try LeavePayload(decoding: Array("bob".utf8)) == LeavePayload(nickname: "bob"))
        #expect(throws: MeshWireError.tooLarge) { try LeavePayload(decoding: [UInt8](repeating: 0x61, count: 256)) }
        #expect(throws: MeshWireError.invalidUTF8) { try LeavePayload(decoding: [0xC3]) }
    }

    @Test("request sync: round trips with optional TLVs, strict sizes, unknown TLVs skipped")
    func requestSync() throws {
        var generator = SeededGenerator(seed: 0x5C)
        for _ in 0..<300 {
            let request = RequestSyncPacket(
                p: UInt8(generator.int(1...255)), m: UInt32(generator.int(1...Int(UInt32.max))),
                data: generator.bytes(generator.int(0...1024)), types: generator.bool() ? generator.bytes(generator.int(0...4)) : nil,
                sinceTimestamp: generator.bool() ? generator.next() : nil,
                fragmentIDFilter: generator.bool() ? (0..<generator.int(1...3)).map { _ in generator.peer().description }.joined(separator: ",") : nil)
            let bytes = try request.encoded()
            #expect(try RequestSyncPacket(decoding: bytes) == request)
            #expect(try RequestSyncPacket(decoding: [0x7E, 0x00, 0x01, 0xAA] + bytes + [0x7F, 0x00, 0x00]) == request)
        }
        let minimal = try RequestSyncPacket(p: 1, m: 1, data: [1]).encoded()
        Self.expectEveryTruncationFails(minimal) { _ = try RequestSyncPacket(decoding: $0) }
        #expect(throws: MeshWireError.invalidField) { try RequestSyncPacket(decoding: [1, 0, 1, 0] + minimal.dropFirst(4)) }
        #expect(throws: MeshWireError.invalidField) { try RequestSyncPacket(decoding: [1, 0, 2, 0, 1] + minimal.dropFirst(4)) }
        #expect(throws: MeshWireError.duplicateField) { try RequestSyncPacket(decoding: minimal + minimal.prefix(4)) }
        #expect(throws: MeshWireError.tooLarge) {
            try RequestSyncPacket(decoding: [1, 0, 1, 1, 2, 0, 4, 0, 0, 0, 1, 3, 0x04, 0x01] + [UInt8](repeating: 0, count: 1025))
        }
        #expect(throws: MeshWireError.invalidField) { try RequestSyncPacket(p: 0, m: 1, data: []).encoded() }
    }

    @Test("identity announcements: round trips, unknown TLVs kept in order, strict keys")
    func announcements() throws {
        var generator = SeededGenerator(seed: 0xA770)
        for _ in 0..<300 {
            let announcement = IdentityAnnouncement(
                nickname: generator.text(maxBytes: 40), noisePublicKey: generator.bytes(32), signingPublicKey: generator.bytes(32),
                directNeighbors: generator.bool() ? (0..<generator.int(1...10)).map { _ in generator.peer() } : nil,
                capabilities: generator.bool() ? PeerCapabilities(rawValue: generator.next() >> generator.int(0...63)) : nil,
                bridgeGeohash: generator.bool() ? String("0123456789bcdefg".prefix(generator.int(1...12))) : nil,
                unknownFields: (0..<generator.int(0...2)).map { _ in
                    .init(type: UInt8(generator.int(7...255)), value: generator.bytes(generator.int(0...20)))
                })
            let bytes = try announcement.encoded()
            #expect(try IdentityAnnouncement(decoding: bytes) == announcement)
        }
        let base = IdentityAnnouncement(nickname: "bob", noisePublicKey: [UInt8](repeating: 1, count: 32), signingPublicKey: [UInt8](repeating: 2, count: 32))
        let bytes = try base.encoded()
        Self.expectEveryTruncationFails(bytes) { _ = try IdentityAnnouncement(decoding: $0) }
        // Unknown TLVs before the known ones come back after them, in order.
        let decoded = try IdentityAnnouncement(decoding: [0x80, 1, 0xAA] + bytes + [0x81, 0])
        #expect(decoded.unknownFields == [.init(type: 0x80, value: [0xAA]), .init(type: 0x81, value: [])])
        #expect(try decoded.encoded() == bytes + [0x80, 1, 0xAA, 0x81, 0])
        // Capabilities are read leniently (BitChat keeps the low 64 bits).
        #expect(try IdentityAnnouncement(decoding: bytes + [5, 9, 1, 0, 0, 0, 0, 0, 0, 0x80, 0x55]).capabilities == PeerCapabilities(rawValue: 1 | 1 << 63))
        #expect(throws: MeshWireError.invalidField) { try IdentityAnnouncement(decoding: [2, 31] + [UInt8](repeating: 0, count: 31)) }
        #expect(throws: MeshWireError.duplicateField) { try IdentityAnnouncement(decoding: bytes + [1, 0]) }
        #expect(throws: MeshWireError.invalidField) { try IdentityAnnouncement(decoding: bytes + [4, 7] + [UInt8](repeating: 0, count: 7)) }
        #expect(throws: MeshWireError.missingField) { try IdentityAnnouncement(decoding: bytes.prefix(5)) }
    }

    @Test("authenticated peer state: round trips and strict decoding")
    func authenticatedPeerState() throws {
        var generator = SeededGenerator(seed: 0xA5)
        for _ in 0..<200 {
            let state = AuthenticatedPeerState(
                capabilities: PeerCapabilities(rawValue: generator.next() >> generator.int(0...63)), signingPublicKey: generator.bytes(32),
                maxReassemblyFragments: generator.bool() ? UInt16(generator.int(1...65_535)) : nil)
            let bytes = try state.encoded()
            #expect(try AuthenticatedPeerState(decoding: bytes) == state)
            if state.maxReassemblyFragments == nil {
                Self.expectEveryTruncationFails(bytes) { _ = try AuthenticatedPeerState(decoding: $0) }
            }
            #expect(try AuthenticatedPeerState(decoding: bytes + [0x7F, 1, 0]) == state)
        }
        let key = [UInt8](repeating: 3, count: 32)
        let good: [UInt8] = [1, 1, 1, 0x20, 2, 32] + key
        #expect(throws: MeshWireError.invalidField) { try AuthenticatedPeerState(decoding: [2] + good.dropFirst()) }
        #expect(throws: MeshWireError.invalidField) { try AuthenticatedPeerState(decoding: [1, 1, 2, 0x20, 0, 2, 32] + key) }
        #expect(throws: MeshWireError.invalidField) { try AuthenticatedPeerState(decoding: [1, 1, 0, 2, 32] + key) }
        #expect(throws: MeshWireError.duplicateField) { try AuthenticatedPeerState(decoding: good + [1, 1, 0x20]) }
        #expect(throws: MeshWireError.invalidField) { try AuthenticatedPeerState(decoding: good + [3, 2, 0, 0]) }
        #expect(throws: MeshWireError.missingField) { try AuthenticatedPeerState(decoding: [1, 2, 32] + key) }
    }

    @Test("file transfer: round trips, legacy 8-byte size, strictness")
    func fileTransfer() throws {
        var generator = SeededGenerator(seed: 0xF11E)
        for _ in 0..<200 {
            let file = FileTransferPacket(
                fileName: generator.bool() ? generator.text(maxBytes: 40) : nil,
                fileSize: generator.bool() ? UInt32(generator.int(0...(1 << 20))) : nil,
                mimeType: generator.bool() ? "image/jpeg" : nil, content: generator.bytes(generator.int(1...3_000)))
            let bytes = try file.encoded()
            var expected = file
            expected.fileSize = file.fileSize ?? UInt32(file.content.count)
            #expect(try FileTransferPacket(decoding: bytes) == expected)
            Self.expectEveryTruncationFails(Array(bytes.prefix(64))) { _ = try FileTransferPacket(decoding: $0) }
        }
        // Found by the fuzzer: without a size TLV the size is the content length, as on iOS,
        // so that decoding what we encode gives the same value.
        let sizeless = try FileTransferPacket(decoding: [4, 0, 0, 0, 1, 0xAB])
        #expect(sizeless.fileSize == 1)
        #expect(try FileTransferPacket(decoding: try sizeless.encoded()) == sizeless)
        let legacy: [UInt8] = [2, 0, 8, 0, 0, 0, 0, 0, 0, 0, 2, 4, 0, 0, 0, 1, 0xAB]
        #expect(try FileTransferPacket(decoding: legacy) == FileTransferPacket(fileSize: 2, content: [0xAB]))
        #expect(try FileTransferPacket(decoding: [0x7F, 0, 1, 0] + legacy) == FileTransferPacket(fileSize: 2, content: [0xAB]))
        #expect(throws: MeshWireError.invalidField) { try FileTransferPacket(decoding: [2, 0, 2, 0, 2, 4, 0, 0, 0, 1, 0xAB]) }
        #expect(throws: MeshWireError.invalidField) { try FileTransferPacket(decoding: [4, 0, 0, 0, 0]) }
        #expect(throws: MeshWireError.duplicateField) { try FileTransferPacket(decoding: [4, 0, 0, 0, 1, 1, 4, 0, 0, 0, 1, 1]) }
        #expect(throws: MeshWireError.tooLarge) { try FileTransferPacket(decoding: [4, 0, 0, 0, 3, 1, 2, 3], limit: 2) }
        #expect(throws: MeshWireError.missingField) { try FileTransferPacket(decoding: [1, 0, 1, 0x61]) }
        #expect(throws: MeshWireError.invalidField) { try FileTransferPacket(content: []).encoded() }
    }
}
