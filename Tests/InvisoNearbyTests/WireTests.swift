import InvisoCrypto
import InvisoKit
import InvisoNearby
import InvisoNoise
import Testing

extension NearbyFrame {
    /// The body of a message frame (nil for a chunk frame).
    var message: [UInt8]? { if case .message(let body) = self { body } else { nil } }
}

extension NearbyFrameDecoder {
    /// The next frame's message body; nil when none is complete or it is a chunk frame.
    mutating func nextMessage() throws(NearbyError) -> [UInt8]? { try next()?.message }
}

@Suite struct WireTests {
    static func transports() throws -> (NoiseTransport, NoiseTransport) {
        var initiator = try NearbyHandshake(role: .initiator, identity: NearbyIdentity(), name: "a")
        var responder = try NearbyHandshake(role: .responder, identity: NearbyIdentity(), name: "b")
        let two = try #require(try responder.receive(try initiator.start()).reply)
        let step = try initiator.receive(two)
        let done = try responder.receive(try #require(step.reply))
        return (try #require(step.established).transport, try #require(done.established).transport)
    }

    @Test func frameDecoderSplitsAStreamFedByteByByte() throws {
        let bodies: [[UInt8]] = [[1], Array(repeating: 2, count: 300), Array(repeating: 3, count: 65_535)]
        let stream = bodies.flatMap { NearbyFrameDecoder.frame($0) }
        var decoder = NearbyFrameDecoder(role: .initiator)
        var frames: [[UInt8]] = []
        var handshake = NearbyFrameDecoder(role: .initiator)
        handshake.append(stream)
        #expect(try handshake.next() == .message(bodies[0]))
        for byte in stream {
            decoder.append([byte])
            while let frame = try decoder.nextMessage() { frames.append(frame) }
        }
        #expect(frames == bodies)
        #expect(decoder.bufferedBytes == 0)
    }

    @Test func frameDecoderRefusesEmptyAndOversizeHandshakeFrames() {
        var empty = NearbyFrameDecoder(role: .responder)
        empty.append([0, 0, 1])
        #expect(nearbyCode { _ = try empty.next() } == .malformed)
        var large = NearbyFrameDecoder(role: .responder)
        large.append([0x02, 0x01])  // 513 bytes declared during the handshake: refused before any body byte
        #expect(nearbyCode { _ = try large.next() } == .frameTooLarge)
    }

    /// Chunk frames: split out of a stream fed byte by byte between message frames, refused
    /// during the handshake, and refused when their declared length is out of range, before
    /// any body byte arrived.
    @Test func chunkFramesTravelBesideMessagesAndAreRefusedOutOfPlace() throws {
        let id = FileTransferID()
        let small = [UInt8](repeating: 5, count: FileChunkCipher.overhead + 1)
        let large = [UInt8](repeating: 6, count: NearbyFrameDecoder.maxSealedChunkBytes)
        var stream = NearbyFrameDecoder.frame([1])
        stream += NearbyFrameDecoder.chunkHeader(transfer: id, index: 0, sealedCount: small.count) + small
        stream += NearbyFrameDecoder.frame([2, 2])
        stream += NearbyFrameDecoder.chunkHeader(transfer: id, index: .max, sealedCount: large.count) + large
        var decoder = NearbyFrameDecoder(role: .initiator)
        var frames: [NearbyFrame] = []
        for byte in stream {
            decoder.append([byte])
            while let frame = try decoder.next() { frames.append(frame) }
        }
        #expect(frames == [
            .message([1]), .chunk(NearbyChunk(transfer: id, index: 0, sealed: small)), .message([2, 2]),
            .chunk(NearbyChunk(transfer: id, index: .max, sealed: large)),
        ])
        #expect(decoder.bufferedBytes == 0)

        let chunk = NearbyFrameDecoder.chunkHeader(transfer: id, index: 1, sealedCount: small.count) + small
        var early = NearbyFrameDecoder(role: .responder)
        early.append(NearbyFrameDecoder.frame([1]) + chunk)
        _ = try early.next()
        #expect(nearbyCode { _ = try early.next() } == .malformed)  // the responder reads two handshake messages
        for declared: UInt32 in [0, 24, 24 + 16, 24 + UInt32(NearbyFrameDecoder.maxSealedChunkBytes) + 1, .max] {
            var decoder = NearbyFrameDecoder(role: .initiator)
            decoder.append(NearbyFrameDecoder.frame([1]) + [0, 0] + withUnsafeBytes(of: declared.bigEndian) { Array($0) })
            _ = try decoder.next()
            #expect(nearbyCode { _ = try decoder.next() } == .malformed)
        }
    }

    @Test func channelCarriesRecordsOfEverySizeAndRefusesTampering() throws {
        let (a, b) = try Self.transports()
        var sender = NearbyChannel(transport: a)
        var receiver = NearbyChannel(transport: b)
        for size in [1, 100, 65_517, 65_518, 65_519, 200_000, NearbyChannel.maxRecordBytes] {
            let record = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            var decoder = NearbyFrameDecoder(role: .initiator)
            decoder.append([0, 1, 0])  // a handshake frame first, as on a real connection
            _ = try decoder.next()
            decoder.append(try sender.seal(record))
            var opened: [UInt8]?
            while let frame = try decoder.nextMessage() {
                #expect(opened == nil)
                opened = try receiver.open(frame)
            }
            #expect(opened == record)
        }
        #expect(nearbyCode { _ = try sender.seal([]) } == .frameTooLarge)
        #expect(nearbyCode { _ = try sender.seal([UInt8](repeating: 0, count: NearbyChannel.maxRecordBytes + 1)) } == .frameTooLarge)

        // A flipped bit, a replay and a reordering are each refused, and the channel stays closed.
        let frames = try sender.seal([1, 2, 3]) + sender.seal([4, 5, 6])
        var decoder = NearbyFrameDecoder(role: .initiator)
        decoder.append([0, 1, 0] + frames)
        _ = try decoder.next()
        let first = try #require(try decoder.nextMessage())
        let second = try #require(try decoder.nextMessage())
        var flipped = first
        flipped[5] ^= 1
        var copy = receiver
        #expect(nearbyCode { _ = try copy.open(flipped) } == .authenticationFailed)
        #expect(nearbyCode { _ = try copy.open(first) } == .unexpectedMessage)
        copy = receiver
        #expect(nearbyCode { _ = try copy.open(second) } == .authenticationFailed)
        #expect(try receiver.open(first) == [1, 2, 3])
        #expect(nearbyCode { _ = try receiver.open(first) } == .authenticationFailed)
    }

    static let offer = try! FileOffer(
        id: FileTransferID(), name: "photo.jpg", size: 200_000, key: SecretBytes([UInt8](repeating: 8, count: 32)))

    static let records: [NearbyRecord] = [
        .connectRequest, .connectAccept, .connectReject, .data(seq: 1, payload: [0x12] + [UInt8](repeating: 1, count: 16)),
        .ack(0), .ack(.max), .fileRequest(offer.id, fromChunk: 2), .fileProgress(offer.id, held: 7),
    ]

    static func payloads() throws -> [NearbyPayload] {
        let alice = NearbyIdentity().publicKey
        let bob = NearbyIdentity().publicKey
        return [
            .text(try NearbyText(id: [UInt8](repeating: 1, count: 16), sentAt: 1_764_000_000_000, lifetime: .week, body: "héllo 👋")),
            .lifetimeProposal(.day), .lifetimeAnswer(.never, accepted: false),
            .groupUpdate(try NearbyGroupUpdate(groupID: [UInt8](repeating: 2, count: 16), epoch: 3, name: "team",
                                               members: [alice, bob], distribution: [UInt8](repeating: 5, count: 140))),
            .groupMessage(groupID: [UInt8](repeating: 2, count: 16), epoch: 3, ciphertext: [9, 9, 9]),
            .groupLeave(groupID: [UInt8](repeating: 2, count: 16)),
            .fileOffer(offer), .fileAnswer(offer.id, accepted: true), .fileComplete(offer.id, verified: true),
            .fileDigest(offer.id, sha256: [UInt8](repeating: 7, count: 32)), .fileCancel(offer.id),
        ]
    }

    @Test func recordsAndPayloadsRoundTripAndRefuseEveryTruncation() throws {
        for record in Self.records {
            let bytes = record.encoded()
            #expect(try NearbyRecord(decoding: bytes) == record)
            // A data record ends with a payload that takes the rest (at least 1 byte): only
            // cuts into its fixed part are refused, and it takes a trailing byte.
            let fixed: Int
            switch record {
            case .data: fixed = 10
            default:
                fixed = bytes.count
                #expect(throws: NearbyError.self) { try NearbyRecord(decoding: bytes + [0]) }
            }
            for end in 0..<fixed { #expect(throws: NearbyError.self) { try NearbyRecord(decoding: Array(bytes[..<end])) } }
        }
        for payload in try Self.payloads() {
            let bytes = payload.encoded()
            #expect(try NearbyPayload(decoding: bytes) == payload)
            // A group message's ciphertext is the rest (at least one byte).
            let isOpenEnded = if case .groupMessage = payload { true } else { false }
            let fixed = isOpenEnded ? 1 + 16 + 4 + 1 : bytes.count
            if !isOpenEnded { #expect(throws: NearbyError.self) { try NearbyPayload(decoding: bytes + [0]) } }
            for end in 0..<fixed { #expect(throws: NearbyError.self) { try NearbyPayload(decoding: Array(bytes[..<end])) } }
        }
        #expect(throws: NearbyError.self) { try NearbyRecord(decoding: []) }
        #expect(throws: NearbyError.self) { try NearbyRecord(decoding: [0x7F]) }
        #expect(throws: NearbyError.self) { try NearbyRecord(decoding: [0x10] + [UInt8](repeating: 0, count: 8) + [1]) }  // seq 0
        #expect(throws: NearbyError.self) { try NearbyPayload(decoding: [0x02, 0, 0, 0, 1]) }  // a lifetime that is not one of the four
        #expect(NearbyLifetime(text: "7d") == .week && NearbyLifetime(text: "1d") == .day && NearbyLifetime(text: "2d") == nil)
    }
}
