import InvisoMesh
import Testing

@Suite("Private outbox (store-and-forward, sender side)")
struct PrivateOutboxTests {
    let bob = PeerID(rawValue: 2)
    let carol = PeerID(rawValue: 3)

    @Test("a message is sent at once, resent with backoff, and leaves on acknowledgement")
    func backoffAndAck() {
        var outbox = PrivateOutbox()
        outbox.enqueue(id: "m1", payload: [1], for: bob, now: 0)
        var sent: [[Int]] = []
        for now: UInt64 in [0, 1_999, 2_000, 5_999, 6_000] { sent.append(outbox.due(now: now).map(\.attempts)) }
        #expect(sent == [[1], [], [2], [], [3]])
        let wrongPeer = outbox.acknowledged("m1", by: carol)
        #expect(!wrongPeer)
        let acknowledged = outbox.acknowledged("m1", by: bob)
        #expect(acknowledged)
        #expect(outbox.count == 0)
        #expect(outbox.nextDeadline == nil)
    }

    @Test("the peer reappearing makes its messages due at once; other peers keep their schedule")
    func reappear() {
        var outbox = PrivateOutbox()
        outbox.enqueue(id: "b", payload: [1], for: bob, now: 0)
        outbox.enqueue(id: "c", payload: [2], for: carol, now: 0)
        _ = outbox.due(now: 0)
        outbox.peerAppeared(bob, now: 100)
        let carolsDue = outbox.due(now: 100, for: carol)
        let due = outbox.due(now: 100)
        #expect(carolsDue.isEmpty)
        #expect(due.map(\.id) == ["b"])
    }

    @Test("bounds: 100 per peer (oldest pushed out), 8 attempts, 24 hours; duplicates ignored")
    func bounds() {
        var outbox = PrivateOutbox()
        var pushedOut: [String] = []
        for index in 0..<100 { pushedOut += outbox.enqueue(id: "m\(index)", payload: [], for: bob, now: 0).map { [$0.id] } ?? [] }
        pushedOut += outbox.enqueue(id: "m5", payload: [], for: bob, now: 0).map { [$0.id] } ?? []
        #expect(pushedOut.isEmpty)
        let oldest = outbox.enqueue(id: "m100", payload: [], for: bob, now: 0)
        #expect(oldest?.id == "m0")
        #expect(outbox.count == 100)

        var attempts = PrivateOutbox()
        attempts.enqueue(id: "x", payload: [], for: carol, now: 0)
        var now: UInt64 = 0
        var sends = 0
        var givenUp: [String] = []
        while now < 3_600_000 {
            sends += attempts.due(now: now).count
            givenUp += attempts.expire(now: now).map(\.id)
            now += 1_000
        }
        #expect(givenUp == ["x"])
        #expect(sends == 8)
        #expect(attempts.count == 0)

        var lifetime = PrivateOutbox()
        lifetime.enqueue(id: "y", payload: [], for: carol, now: 10)
        let early = lifetime.expire(now: 10 + 24 * 3_600_000 - 1)
        #expect(early.isEmpty)
        #expect(lifetime.nextDeadline == 10)
        _ = lifetime.due(now: 10)
        let late = lifetime.expire(now: 10 + 24 * 3_600_000)
        #expect(late.map(\.id) == ["y"])
    }

    @Test("restored entries keep their attempts and schedule")
    func restore() {
        var outbox = PrivateOutbox()
        outbox.enqueue(id: "m", payload: [7], for: bob, now: 0)
        _ = outbox.due(now: 0)
        let restored = PrivateOutbox(restoring: outbox.entries)
        #expect(restored.entries == outbox.entries)
    }
}
