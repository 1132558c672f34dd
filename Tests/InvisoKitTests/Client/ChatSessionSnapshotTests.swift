import Crypto
import InvisoCrypto
@testable import InvisoKit
import InvisoNoise
import InvisoTesting
import Testing

@Suite("ChatSessionSnapshot")
struct ChatSessionSnapshotTests {
    static let deviceID = "0F4B5C1E-2A3D-4E5F-8A9B-0C1D2E3F4A5B"

    /// The first 32 bytes the fixture's generator draws for `seed`: the fixture's private key.
    static func identity(seed: UInt64) -> SecretBytes {
        var generator = SeededGenerator(seed: seed)
        return SecretBytes(generator.bytes(32))
    }

    /// A link with 5 sent (2 acked), 1, 2 and 4 received (4 waits for 3).
    static func busyLink() throws -> ReliableLink {
        var link = ReliableLink()
        for index in 1...5 { _ = try link.enqueue([UInt8(index), 0xAA]) }
        #expect(link.takeTransmissions().map(\.seq) == [1, 2, 3, 4, 5])
        #expect(try link.acknowledge(2) == 1...2)
        #expect(try link.receive(seq: 1, payload: [0x11]).count == 1)
        #expect(try link.receive(seq: 2, payload: [0x12]).count == 1)
        #expect(try link.receive(seq: 4, payload: [0x14]).isEmpty)
        _ = link.takeAck()
        return link
    }

    @Test("a restored link resends what is unacknowledged, keeps its reorder buffer, owes an ack")
    func linkRoundTrip() throws {
        let original = try Self.busyLink()
        var restored = try ReliableLink(restoring: original.snapshot)
        #expect(restored.snapshot == original.snapshot)
        #expect(restored.nextSeq == 6 && restored.peerAck == 2 && restored.delivered == 2)
        #expect(restored.takeTransmissions().map(\.seq) == [3, 4, 5])
        #expect(restored.unacknowledged.map(\.payload) == [[3, 0xAA], [4, 0xAA], [5, 0xAA]])
        #expect(restored.takeAck() == 2)
        #expect(try restored.receive(seq: 4, payload: [0x14]).isEmpty)  // still buffered: a duplicate
        #expect(try restored.receive(seq: 3, payload: [0x13]).map(\.seq) == [3, 4])
        #expect(try restored.enqueue([6]) == 6)
    }

    @Test("inconsistent link snapshots are refused")
    func linkRefusals() throws {
        let good = try Self.busyLink().snapshot
        var cases: [ReliableLink.Snapshot] = []
        var bad = good
        bad.nextSeq = 0
        bad.peerAck = 0
        bad.unacknowledged = []
        cases.append(bad)
        bad = good
        bad.unacknowledged.removeLast()
        cases.append(bad)
        bad = good
        bad.peerAck = 6
        cases.append(bad)
        bad = good
        bad.reordered[3] = [0x13]  // = delivered + 1: it would have been delivered
        cases.append(bad)
        bad = good
        bad.reordered[2 + 1_025] = [0x01]  // beyond the reorder window
        cases.append(bad)
        for snapshot in cases {
            #expect(throws: ReliableError.malformedRecord) { try ReliableLink(restoring: snapshot) }
        }
    }

    @Test("v2: the restored channel continues the ratchet both ways; duplicates are refused")
    func v2RoundTrip() throws {
        var harness = ChannelHarness([ChannelFixture.v2(.creator, seed: 1), ChannelFixture.v2(.joiner, seed: 2)], routes: [1, 0])
        harness.startAll()
        #expect(harness.established == [true, true])
        try harness.send(.data(seq: 1, payload: [1]), from: 0)
        try harness.send(.data(seq: 1, payload: [2]), from: 1)
        let channel = try #require(harness.parties[0] as? V2SecureChannel)
        let session = try #require(channel.session)
        let link = try Self.busyLink()
        let snapshot = ChatSessionSnapshot(
            role: .creator, roomID: ChannelFixture.roomID, deviceID: Self.deviceID, identity: Self.identity(seed: 1),
            channel: .v2(session), link: link.snapshot)
        let stored = snapshot.serialized()
        #expect(!"\(snapshot)".contains(Self.deviceID) && !"\(snapshot)".contains(ChannelFixture.roomID))

        let parsed = try ChatSessionSnapshot(serialized: stored)
        #expect(parsed.serialized() == stored)
        #expect(parsed.role == .creator && parsed.roomID == ChannelFixture.roomID && parsed.deviceID == Self.deviceID)
        #expect(parsed.identity == Self.identity(seed: 1) && parsed.link == link.snapshot && parsed.protocolVersion == .v2)
        guard case .v2(let restoredSession) = parsed.channel else {
            Issue.record("not a v2 channel")
            return
        }
        let restored = V2SecureChannel(restoring: restoredSession, random: SeededGenerator(seed: 77))
        #expect(restored.isEstablished && restored.isVerified)
        #expect(restored.safetyNumber == channel.safetyNumber && restored.peerIdentity == channel.peerIdentity)
        #expect(restored.directPathKey != nil && restored.directPathKey == channel.directPathKey)

        harness.parties[0] = restored
        try harness.send(.data(seq: 2, payload: [3]), from: 0)
        try harness.send(.data(seq: 2, payload: [4]), from: 1)
        try harness.send(.ack(2), from: 0)
        #expect(harness.received[1] == [.data(seq: 1, payload: [1]), .data(seq: 2, payload: [3]), .ack(2)])
        // A frame opened by the restored ratchet is refused the second time.
        let replay = try harness.parties[1].seal(.data(seq: 3, payload: [5]))
        #expect(try harness.parties[0].receive(frame: replay).count == 1)
        #expect(throws: SecureChannelError.self) { _ = try harness.parties[0].receive(frame: replay) }
        #expect(harness.received[0] == [.data(seq: 1, payload: [2]), .data(seq: 2, payload: [4])])
        #expect(harness.failures == [nil, nil])
    }

    @Test("v1: the restored channel keeps its counters and its replay window")
    func v1RoundTrip() throws {
        var harness = ChannelHarness(
            [ChannelFixture.v1(.initiator, seed: 1), ChannelFixture.v1(.responder, seed: 2)], routes: [1, 0])
        harness.startAll()
        #expect(harness.established == [true, true])
        try harness.send(.data(seq: 1, payload: [1]), from: 0)
        let fromJoiner = try harness.parties[1].seal(.data(seq: 1, payload: [2]))
        harness.queue.append((0, .frame(fromJoiner)))
        harness.run()
        let channel = try #require(harness.parties[0] as? V1SecureChannel)
        let state = try #require(channel.resumeState)
        let snapshot = ChatSessionSnapshot(
            role: .creator, roomID: ChannelFixture.roomID, deviceID: Self.deviceID, identity: Self.identity(seed: 1),
            channel: .v1(peerPublicKey: state.peerPublicKey, sentCount: state.sentCount, window: state.window),
            link: ReliableLink().snapshot)
        let parsed = try ChatSessionSnapshot(serialized: snapshot.serialized())
        #expect(parsed.protocolVersion == .v1 && parsed.serialized() == snapshot.serialized())
        guard case .v1(let peer, let sent, let window) = parsed.channel else {
            Issue.record("not a v1 channel")
            return
        }
        #expect(sent == 1 && window == state.window)
        let key = try parsed.identity.withUnsafeBytes { try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: $0) }
        let restored = try V1SecureChannel(
            restoring: .initiator, roomID: parsed.roomID, privateKey: key, peerPublicKey: peer, sentCount: sent,
            window: window, timestamp: { 1_800_000_000.5 })
        #expect(restored.safetyNumber == channel.safetyNumber && restored.directPathKey == channel.directPathKey)
        harness.parties[0] = restored
        // The joiner's frame again: a replay, refused by the restored window.
        #expect(throws: SecureChannelError.self) { _ = try harness.parties[0].receive(frame: fromJoiner) }
        try harness.send(.data(seq: 2, payload: [3]), from: 0)
        try harness.send(.data(seq: 2, payload: [4]), from: 1)
        #expect(harness.received[1] == [.data(seq: 1, payload: [1]), .data(seq: 2, payload: [3])])
        #expect(harness.received[0] == [.data(seq: 1, payload: [2]), .data(seq: 2, payload: [4])])
        // The restored counter goes on: seq 2 was sealed already.
        #expect(throws: SecureChannelError.self) { _ = try harness.parties[0].seal(.data(seq: 2, payload: [5])) }
    }

    @Test("truncated, foreign, trailing or inconsistent bytes give a typed error")
    func malformed() throws {
        var harness = ChannelHarness([ChannelFixture.v2(.creator, seed: 1), ChannelFixture.v2(.joiner, seed: 2)], routes: [1, 0])
        harness.startAll()
        let session = try #require((harness.parties[0] as? V2SecureChannel)?.session)
        let snapshot = ChatSessionSnapshot(
            role: .creator, roomID: ChannelFixture.roomID, deviceID: Self.deviceID, identity: Self.identity(seed: 1),
            channel: .v2(session), link: try Self.busyLink().snapshot)
        let bytes = snapshot.serialized().withUnsafeBytes { Array($0) }
        for length in 0..<bytes.count {
            #expect(throws: ChatSnapshotError.self) { try ChatSessionSnapshot(serialized: SecretBytes(bytes.prefix(length))) }
        }
        #expect(throws: ChatSnapshotError.truncated) { try ChatSessionSnapshot(serialized: SecretBytes(bytes.prefix(40))) }
        #expect(throws: ChatSnapshotError.malformed) { try ChatSessionSnapshot(serialized: SecretBytes(bytes + [0])) }
        var foreign = bytes
        foreign[0] = UInt8(ascii: "X")
        #expect(throws: ChatSnapshotError.unsupportedFormat) { try ChatSessionSnapshot(serialized: SecretBytes(foreign)) }
        var future = bytes
        future[4] = 0x02
        #expect(throws: ChatSnapshotError.unsupportedFormat) { try ChatSessionSnapshot(serialized: SecretBytes(future)) }
        var badRole = bytes
        badRole[6] = 0x03
        #expect(throws: ChatSnapshotError.malformed) { try ChatSessionSnapshot(serialized: SecretBytes(badRole)) }
        var otherRole = bytes  // the session inside is the creator's
        otherRole[6] = 0x02
        #expect(throws: ChatSnapshotError.malformed) { try ChatSessionSnapshot(serialized: SecretBytes(otherRole)) }
        // A link that no longer fits a smaller outbox limit.
        var small = ReliableLink.Configuration()
        small.outboxLimit = 2
        #expect(throws: ChatSnapshotError.malformed) {
            try ChatSessionSnapshot(serialized: SecretBytes(bytes), linkConfiguration: small)
        }
        #expect(!ChatSnapshotError.malformed.description.isEmpty)
    }
}
