@testable import InvisoKit
import InvisoTesting
import Testing

@Suite("ReliableLink and ReliableRecord")
struct ReliableLinkTests {
    static func payload(_ index: UInt64) -> [UInt8] { Array("m\(index)".utf8) }

    @Test func recordsRoundTripAndRejectMalformedBytes() throws {
        for record in [ReliableRecord.data(seq: 1, payload: []), .data(seq: .max, payload: [0, 1, 2]), .ack(0), .ack(77)] {
            #expect(try ReliableRecord(decoding: record.encoded) == record)
        }
        #expect(ReliableRecord.data(seq: 0x0102, payload: [9]).encoded == [1, 0, 0, 0, 0, 0, 0, 1, 2, 9])
        #expect(ReliableRecord.ack(5).encoded == [2, 0, 0, 0, 0, 0, 0, 0, 5])
        let malformed: [[UInt8]] = [
            [], [1], [1, 0, 0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0, 0],  // too short; seq 0
            [2, 0, 0, 0, 0, 0, 0, 0, 1, 0], [2, 0, 0],  // ack of the wrong length
            [0], [0, 0, 0, 0, 0, 0, 0, 0, 1], [3, 0, 0, 0, 0, 0, 0, 0, 1], [0xFF] + [UInt8](repeating: 1, count: 8),
        ]
        for bytes in malformed {
            #expect(throws: ReliableError.malformedRecord) { try ReliableRecord(decoding: bytes) }
        }
        #expect(!ReliableRecord.data(seq: 1, payload: Array("secret".utf8)).description.contains("secret"))
    }

    @Test func outboxKeepsEverythingUntilAcknowledged() throws {
        var link = ReliableLink()
        for index in 1...5 { #expect(try link.enqueue(Self.payload(UInt64(index))) == UInt64(index)) }
        #expect(link.takeTransmissions().map(\.seq) == [1, 2, 3, 4, 5])
        #expect(link.takeTransmissions().isEmpty)
        #expect(try link.acknowledge(2) == 1...2)
        #expect(link.unacknowledged.map(\.seq) == [3, 4, 5])
        // A reconnect: everything unacknowledged goes again, in order.
        link.retransmitAll()
        #expect(link.takeTransmissions().map(\.seq) == [3, 4, 5])
        // Old and repeated acks change nothing.
        #expect(try link.acknowledge(1) == nil)
        #expect(try link.acknowledge(2) == nil)
        #expect(try link.acknowledge(5) == 3...5)
        #expect(link.unacknowledgedCount == 0)
        _ = try link.enqueue([])
        #expect(link.takeTransmissions().map(\.seq) == [6])
    }

    @Test func ackOfUnsentIsRefusedWithoutChange() throws {
        var link = ReliableLink()
        _ = try link.enqueue([1])
        #expect(throws: ReliableError.acknowledgesUnsent) { try link.acknowledge(2) }
        #expect(throws: ReliableError.acknowledgesUnsent) { try link.acknowledge(.max) }
        #expect(link.peerAck == 0 && link.unacknowledgedCount == 1)
        #expect(try link.acknowledge(1) == 1...1)
    }

    @Test func sendWindowLimitsMessagesInFlight() throws {
        var configuration = ReliableLink.Configuration()
        configuration.sendWindow = 3
        var link = ReliableLink(configuration: configuration)
        for index in 1...10 { _ = try link.enqueue(Self.payload(UInt64(index))) }
        #expect(link.takeTransmissions().map(\.seq) == [1, 2, 3])
        #expect(link.takeTransmissions().isEmpty && link.hasUntransmitted)
        _ = try link.acknowledge(2)
        #expect(link.takeTransmissions().map(\.seq) == [4, 5])
        link.retransmitAll()
        #expect(link.takeTransmissions().map(\.seq) == [3, 4, 5])
    }

    @Test func outboxLimit() throws {
        var configuration = ReliableLink.Configuration()
        configuration.outboxLimit = 2
        var link = ReliableLink(configuration: configuration)
        _ = try link.enqueue([1])
        _ = try link.enqueue([2])
        #expect(throws: ReliableError.outboxFull) { try link.enqueue([3]) }
        #expect(link.nextSeq == 3)
        _ = try link.acknowledge(1)
        #expect(try link.enqueue([3]) == 3)
    }

    @Test func aBatchIsQueuedWholeOrNotAtAll() throws {
        var configuration = ReliableLink.Configuration()
        configuration.outboxLimit = 4
        var link = ReliableLink(configuration: configuration)
        #expect(try link.enqueue(contentsOf: [[1], [2], [3]]) == 1..<4)
        #expect(throws: ReliableError.outboxFull) { try link.enqueue(contentsOf: [[4], [5]]) }
        #expect(link.nextSeq == 4 && link.unacknowledgedCount == 3)
        #expect(try link.enqueue(contentsOf: [[UInt8]]()) == 4..<4)
        #expect(try link.enqueue(contentsOf: [[4]]) == 4..<5)
        #expect(link.takeTransmissions().map(\.payload) == [[1], [2], [3], [4]])
    }

    @Test func receiverDeduplicatesAndRestoresOrder() throws {
        var link = ReliableLink()
        #expect(try link.receive(seq: 1, payload: [1]).map(\.seq) == [1])
        #expect(try link.receive(seq: 1, payload: [1]).isEmpty)  // duplicate
        #expect(try link.receive(seq: 3, payload: [3]).isEmpty)  // ahead of a gap
        #expect(try link.receive(seq: 3, payload: [3]).isEmpty)  // duplicate while buffered
        #expect(link.bufferedCount == 1)
        #expect(try link.receive(seq: 2, payload: [2]).map(\.payload) == [[2], [3]])
        #expect(link.delivered == 3 && link.bufferedCount == 0)
        #expect(link.takeAck() == 3)
        #expect(link.takeAck() == nil)
        // A duplicate after the ack owes the ack again (the peer missed it).
        #expect(try link.receive(seq: 2, payload: [2]).isEmpty)
        #expect(link.takeAck() == 3)
    }

    @Test func hostileSequenceNumbersAreRefusedWithoutChange() throws {
        var configuration = ReliableLink.Configuration()
        configuration.reorderWindow = 8
        var link = ReliableLink(configuration: configuration)
        #expect(throws: ReliableError.malformedRecord) { try link.receive(seq: 0, payload: []) }
        #expect(throws: ReliableError.sequenceTooFarAhead) { try link.receive(seq: 10, payload: []) }
        #expect(throws: ReliableError.sequenceTooFarAhead) { try link.receive(seq: .max, payload: []) }
        #expect(!link.isAckOwed && link.bufferedCount == 0 && link.delivered == 0)
        #expect(throws: ReliableError.sequenceTooFarAhead) { try link.receive(seq: 9, payload: []) }
        #expect(try link.receive(seq: 8, payload: []).isEmpty)  // the edge of the window
        #expect(link.bufferedCount == 1)
    }

    @Test func ackIsDueAfterABurst() throws {
        var configuration = ReliableLink.Configuration()
        configuration.ackEvery = 4
        var link = ReliableLink(configuration: configuration)
        for seq in 1...3 { _ = try link.receive(seq: UInt64(seq), payload: []) }
        #expect(link.isAckOwed && !link.isAckDue)
        _ = try link.receive(seq: 4, payload: [])
        #expect(link.isAckDue)
        #expect(link.takeAck() == 4)
        #expect(!link.isAckOwed && !link.isAckDue)
    }

    /// Two links over a lossy, duplicating, reordering channel, with reconnects: every
    /// message arrives exactly once and in order (seeded, several seeds).
    @Test(arguments: [UInt64(1), 2, 3, 4, 5])
    func lossyChannelDeliversExactlyOnceInOrder(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        var configuration = ReliableLink.Configuration()
        configuration.sendWindow = 32
        configuration.reorderWindow = 64
        var sender = ReliableLink(configuration: configuration)
        var receiver = ReliableLink(configuration: configuration)
        let total: UInt64 = 500
        var nextToEnqueue: UInt64 = 1
        var inFlight: [ReliableRecord] = []
        var acksInFlight: [UInt64] = []
        var received: [UInt64] = []
        var rounds = 0
        while received.count < Int(total) {
            rounds += 1
            #expect(rounds < 100_000)
            if rounds >= 100_000 { break }
            // Enqueue a few (the outbox takes them whether or not anything is sent).
            for _ in 0..<Int(random.next() % 4) where nextToEnqueue <= total {
                #expect(try sender.enqueue(Self.payload(nextToEnqueue)) == nextToEnqueue)
                nextToEnqueue += 1
            }
            for message in sender.takeTransmissions() {
                inFlight.append(.data(seq: message.seq, payload: message.payload))
                if random.next() % 10 == 0 { inFlight.append(.data(seq: message.seq, payload: message.payload)) }
            }
            // Deliver some in a shuffled order, lose 10 %.
            inFlight.shuffle(using: &random)
            let count = inFlight.isEmpty ? 0 : Int(random.next() % UInt64(inFlight.count + 1))
            for record in inFlight.prefix(count) where random.next() % 10 != 0 {
                guard case .data(let seq, let payload) = record else { continue }
                for delivery in try receiver.receive(seq: seq, payload: payload) {
                    #expect(delivery.payload == Self.payload(delivery.seq))
                    received.append(delivery.seq)
                }
            }
            inFlight.removeFirst(count)
            if random.next() % 3 == 0, let ack = receiver.takeAck() { acksInFlight.append(ack) }
            acksInFlight.shuffle(using: &random)
            while let ack = acksInFlight.popLast() {
                if random.next() % 5 != 0 { _ = try sender.acknowledge(ack) }
            }
            // Now and then a reconnect (or a retransmission timeout).
            if random.next() % 20 == 0 { sender.retransmitAll() }
            if inFlight.isEmpty, sender.unacknowledgedCount > 0, !sender.hasUntransmitted { sender.retransmitAll() }
        }
        #expect(received == Array(1...total))
    }
}
