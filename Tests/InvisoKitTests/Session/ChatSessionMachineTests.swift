import Foundation
@testable import InvisoKit
import InvisoStore
import InvisoTesting
import InvisoTime
import Testing

/// The session engine with no server, no socket and no sleep: two machines over
/// ``SessionSimulation``'s virtual network and clock.
@Suite("ChatSessionMachine")
struct ChatSessionMachineTests {
    static func texts(_ side: String, _ count: Int) -> [ChatPayload] {
        (0..<count).map { .text("\(side)-\($0)") }
    }

    static func paired(seed: UInt64, configure: (inout ChatSessionMachine.Configuration) -> Void = { _ in }) -> SessionSimulation {
        let simulation = SessionSimulation(seed: seed, configure: configure)
        simulation.start()
        #expect(simulation.run(for: .seconds(5)) { $0.bothActive })
        return simulation
    }

    @Test func v2PairsVerifiedWithTheSameSafetyNumber() throws {
        let simulation = Self.paired(seed: 1)
        let alice = try #require(simulation.security(0))
        let bob = try #require(simulation.security(1))
        #expect(alice.version == .v2 && alice.isVerified && bob.isVerified)
        #expect(alice.safetyNumber == bob.safetyNumber)
        #expect(simulation.events[0].first == .state(.pending))
        #expect(simulation.events[0].contains(.state(.accepted)))
        #expect(simulation.paths(0) == [.relay] && simulation.paths(1) == [.relay])
        #expect(simulation.errors(0).isEmpty && simulation.errors(1).isEmpty)
    }

    @Test func messagesQueuedBeforeThePairingArriveInOrderAndAreAcked() throws {
        let simulation = SessionSimulation(seed: 2)
        simulation.start()
        for index in 0..<20 { try simulation.send(1, "early-\(index)") }
        #expect(simulation.run { $0.delivered(1).count == 20 })
        #expect(simulation.messages(0).map(\.id) == Array(1...20))
        #expect(simulation.messages(0).map(\.payload) == (0..<20).map { .text("early-\($0)") })
        #expect(simulation.machines[1].undeliveredCount == 0)
    }

    /// The randomized check: 10,000 messages each way (2,000 for two more seeds) over a
    /// link that loses, duplicates and reorders frames, with the relay dropping now and then;
    /// every message arrives exactly once, in order, and is reported delivered once. The
    /// test yields between slices of virtual time, so it never holds a pool thread for long.
    @Test(arguments: [(11, 10_000), (12, 2_000), (13, 2_000)] as [(UInt64, Int)])
    func messagesOverALossyLinkArriveExactlyOnceInOrder(seed: UInt64, count: Int) async throws {
        let simulation = Self.paired(seed: seed)
        simulation.networks[.relay] = .init(loss: 0.05, duplication: 0.03, delay: .milliseconds(20), jitter: .milliseconds(30))
        var sent = [0, 0]
        var drops = 0
        // Messages trickle in from both sides while the network misbehaves.
        while sent[0] < count || sent[1] < count {
            for side in 0..<2 where sent[side] < count {
                let burst = Int(simulation.random.next() % 40) + 1
                for _ in 0..<min(burst, count - sent[side]) {
                    try simulation.send(side, "\(side)-\(sent[side])")
                    sent[side] += 1
                }
            }
            if simulation.random.next() % 50 == 0, drops < 5 {
                drops += 1
                simulation.dropRelay(Int(simulation.random.next() % 2), for: .milliseconds(300))
            }
            simulation.run(for: .milliseconds(Int64(simulation.random.next() % 200)))
            await Task.yield()
        }
        var done = false
        for _ in 0..<3_600 where !done {
            done = simulation.run(for: .seconds(1)) { $0.delivered(0).count == count && $0.delivered(1).count == count }
            await Task.yield()
        }
        #expect(done)
        for side in 0..<2 {
            let received = simulation.messages(1 - side)
            #expect(received.count == count, "side \(side): \(received.count) of \(count) arrived")
            #expect(received.map(\.id) == Array(1...UInt64(count)))
            #expect(received.map(\.payload) == (0..<count).map { .text("\(side)-\($0)") })
            #expect(simulation.delivered(side) == Array(1...UInt64(count)))
        }
    }

    @Test func anUnacknowledgedMessageIsSentAgainWhenTheAckDoesNotCome() throws {
        let simulation = Self.paired(seed: 3)
        simulation.networks[.relay] = .init(loss: 1.0)
        try simulation.send(0, "lost at first")
        simulation.run(for: .milliseconds(500))
        #expect(simulation.messages(1).isEmpty)
        simulation.networks[.relay] = .perfect
        // The resend check runs every 2 s of virtual time; nothing waits for real.
        #expect(simulation.run(for: .seconds(10)) { $0.delivered(0) == [1] })
        #expect(simulation.messages(1).map(\.payload) == [.text("lost at first")])
    }

    /// A receiver slower than the resend interval (250 frames a second, so the first
    /// window of 512 takes longer than one interval to get through, and its acks queue
    /// behind it): each resend that finds no progress waits twice as long as the last, so
    /// the copies do not pile up faster than they drain (which had two clients on a busy
    /// host stuck at 512 messages each way, receiving tens of thousands of old copies).
    @Test func aSlowReceiverIsNotBuriedInResends() throws {
        let simulation = Self.paired(seed: 14) { $0.retransmitInterval = .milliseconds(700) }
        simulation.networks[.relay] = .init(delay: .milliseconds(5), serviceTime: .milliseconds(4))
        let count = 1_000
        let before = [simulation.framesSent[0][.relay] ?? 0, simulation.framesSent[1][.relay] ?? 0]
        for side in 0..<2 { try simulation.request(side) { try $0.send(contentsOf: Self.texts("\(side)", count), at: $1).actions } }
        #expect(simulation.run(for: .seconds(60)) { $0.delivered(0).count == count && $0.delivered(1).count == count })
        for side in 0..<2 {
            #expect(simulation.messages(1 - side).map(\.id) == Array(1...UInt64(count)))
            // No copies: each message went out once, and the acks (without the fix: 21,000
            // frames a side).
            let frames = (simulation.framesSent[side][.relay] ?? 0) - before[side]
            #expect(frames < count + count / 4, "side \(side) sent \(frames) frames")
        }
    }

    /// One message lost on a path that otherwise delivers, while the peer keeps talking:
    /// its frames keep coming (so it is not silent), but its acks stop at the gap and come
    /// again unchanged for the messages after it — which is what makes the sender resend.
    @Test func aGapIsRepairedWhileThePeerKeepsTalking() throws {
        let simulation = Self.paired(seed: 16)
        for index in 1...4 { try simulation.send(0, "m\(index)") }
        simulation.run(for: .milliseconds(100))
        simulation.networks[.relay] = .init(loss: 1.0)
        try simulation.send(0, "m5")
        simulation.networks[.relay] = .perfect
        for index in 6...10 { try simulation.send(0, "m\(index)") }
        // Bob talks every half second for 20 s.
        var repaired = false
        for tick in 0..<40 where !repaired {
            try simulation.send(1, "bob-\(tick)")
            repaired = simulation.run(for: .milliseconds(500)) { $0.messages(1).count == 10 }
        }
        #expect(repaired)
        #expect(simulation.messages(1).map(\.payload) == (1...10).map { .text("m\($0)") })
        #expect(simulation.run(for: .seconds(1)) { $0.delivered(0).count == 10 })
        #expect(simulation.delivered(0) == Array(1...10))
    }

    /// A peer that hears nothing for two minutes: the resends come 2, 4, 8, … s apart (up
    /// to 60 s), not every 2 s; once the path delivers again, the next one gets through and
    /// the plain interval is back.
    @Test func resendsToASilentPeerBackOff() throws {
        let simulation = Self.paired(seed: 15)
        simulation.networks[.relay] = .init(loss: 1.0)
        let before = simulation.framesSent[0][.relay] ?? 0
        try simulation.send(0, "into the void")
        simulation.run(for: .seconds(120))
        let copies = (simulation.framesSent[0][.relay] ?? 0) - before
        // The first send, then resends at 2, 6, 14, 30, 62 and 122 s at most.
        #expect(copies >= 5 && copies <= 7, "\(copies) copies in 120 s")
        #expect(simulation.machines[0].retransmitBackoff >= 5)
        simulation.networks[.relay] = .perfect
        #expect(simulation.run(for: .seconds(61)) { $0.delivered(0) == [1] })
        #expect(simulation.machines[0].retransmitBackoff == 0)
        // Back to the plain interval: a loss now is repaired within a few seconds.
        simulation.networks[.relay] = .init(loss: 1.0)
        try simulation.send(0, "lost once")
        simulation.run(for: .milliseconds(100))
        simulation.networks[.relay] = .perfect
        #expect(simulation.run(for: .seconds(5)) { $0.delivered(0) == [1, 2] })
    }

    @Test func aReconnectResendsWhatThePeerMissed() throws {
        let simulation = Self.paired(seed: 4)
        simulation.dropRelay(1, for: .seconds(5))
        for index in 0..<50 { try simulation.send(0, "while away \(index)") }
        simulation.run(for: .seconds(1))
        #expect(simulation.messages(1).isEmpty)
        #expect(simulation.run(for: .seconds(30)) { $0.delivered(0).count == 50 })
        #expect(simulation.messages(1).map(\.id) == Array(1...50))
    }

    @Test func duplicatedFramesAreDeliveredOnce() throws {
        let simulation = Self.paired(seed: 5)
        simulation.networks[.relay] = .init(duplication: 1.0, jitter: .milliseconds(10))
        for index in 0..<200 { try simulation.send(0, "dup \(index)") }
        #expect(simulation.run { $0.delivered(0).count == 200 })
        simulation.run(for: .seconds(5))
        #expect(simulation.messages(1).map(\.id) == Array(1...200))
    }

    @Test func relayToDirectToRelayWithLossAndReorderLosesNothing() throws {
        let simulation = Self.paired(seed: 6) { $0.triesDirectPath = true }
        simulation.networks[.relay] = .init(loss: 0.1, jitter: .milliseconds(40))
        simulation.networks[SessionSimulation.direct] = .init(loss: 0.1, delay: .milliseconds(1), jitter: .milliseconds(5))
        for index in 0..<300 { try simulation.send(0, "a\(index)"); try simulation.send(1, "b\(index)") }
        #expect(simulation.run(for: .seconds(5)) { $0.paths(0).last == .direct && $0.paths(1).last == .direct })
        #expect(simulation.machines[0].directPhase == .connected)
        for index in 300..<600 { try simulation.send(0, "a\(index)"); try simulation.send(1, "b\(index)") }
        simulation.run(for: .milliseconds(50))
        simulation.dropDirectPath()
        for index in 600..<900 { try simulation.send(0, "a\(index)"); try simulation.send(1, "b\(index)") }
        #expect(simulation.run(for: .seconds(600)) { $0.delivered(0).count == 900 && $0.delivered(1).count == 900 })
        #expect(simulation.paths(0) == [.relay, .direct, .relay])
        #expect(simulation.messages(1).map(\.payload) == (0..<900).map { .text("a\($0)") })
        #expect(simulation.messages(0).map(\.payload) == (0..<900).map { .text("b\($0)") })
        #expect(simulation.framesSent[0][SessionSimulation.direct, default: 0] > 0)
    }

    @Test func anUnreachablePeerKeepsTheSessionOnTheRelay() throws {
        let simulation = SessionSimulation(seed: 7) { $0.triesDirectPath = true }
        simulation.directReachable = false
        simulation.start()
        #expect(simulation.run(for: .seconds(5)) { $0.bothActive })
        simulation.run(for: .seconds(5))
        #expect(simulation.machines[0].directPhase == .finished)
        #expect(simulation.paths(0) == [.relay])
        try simulation.send(0, "still here")
        #expect(simulation.run { $0.messages(1).count == 1 })
    }

    @Test func theDirectAttemptGivesUpWhenThePeerSendsNoCandidates() {
        let simulation = SessionSimulation(
            seed: 8, configure: { $0.triesDirectPath = true; $0.directCandidatesTimeout = .seconds(30) },
            configureJoiner: { $0.triesDirectPath = false })
        simulation.start()
        #expect(simulation.run(for: .seconds(5)) { $0.bothActive && $0.machines[0].directPhase == .listening })
        #expect(simulation.machines[1].directPhase == .finished)
        #expect(!simulation.run(for: .seconds(25)) { $0.machines[0].directPhase == .finished })
        #expect(simulation.run(for: .seconds(10)) { $0.machines[0].directPhase == .finished })
        #expect(simulation.paths(0) == [.relay])
    }

    @Test func lifetimesProposedAcceptedAndRejected() throws {
        let simulation = Self.paired(seed: 9)
        try simulation.request(0) { try $0.proposeLifetime(.oneDay, at: $1) }
        #expect(simulation.run { $0.events[1].contains(.lifetimeProposed(.oneDay)) })
        try simulation.request(1) { try $0.acceptLifetime(.oneDay, at: $1) }
        #expect(simulation.run { $0.events[0].contains(.lifetime(.oneDay)) })
        #expect(simulation.machines[0].lifetime == .oneDay && simulation.machines[1].lifetime == .oneDay)
        try simulation.request(0) { try $0.proposeLifetime(.oneHour, at: $1) }
        #expect(simulation.run { $0.events[1].contains(.lifetimeProposed(.oneHour)) })
        try simulation.request(1) { try $0.rejectLifetime(reason: "no", at: $1) }
        simulation.run(for: .seconds(1))
        #expect(simulation.machines[0].lifetime == .oneDay)
        #expect(!simulation.events[0].contains(.lifetime(.oneHour)))
        // The negotiation's own messages are reported (a UI shows them its way), never stored.
        #expect(simulation.messages(1).map(\.payload).allSatisfy { if case .lifetimeProposal = $0 { true } else { false } })
    }

    @Test func aBareCodeJoinFallsBackToV1AndBothSidesAreWarned() throws {
        let simulation = SessionSimulation(seed: 10, v1Joiner: true)
        simulation.start()
        #expect(simulation.run(for: .seconds(5)) { $0.bothActive })
        for side in 0..<2 {
            #expect(simulation.events[side].contains(.warning(.unverifiedV1)))
            let security = try #require(simulation.security(side))
            #expect(security.version == .v1 && !security.isVerified)
        }
        #expect(simulation.security(0)?.safetyNumber == simulation.security(1)?.safetyNumber)
        try simulation.send(0, "hello v1")
        try simulation.send(1, "hello back")
        #expect(simulation.run { $0.messages(0).count == 1 && $0.messages(1).count == 1 })
        #expect(simulation.delivered(0).isEmpty, "v1 has no acks")
    }

    @Test func withoutTheFallbackAV1PeerFailsThePairing() {
        let simulation = SessionSimulation(seed: 14, v1Joiner: true) { $0.allowsV1Fallback = false; $0.pairingTimeout = .seconds(10) }
        simulation.start()
        #expect(simulation.run(for: .seconds(60)) { $0.closeReason(0) != nil })
        #expect(simulation.closeReason(0) == .pairingFailed)
        #expect(simulation.errors(0).contains(.pairingTimedOut))
    }

    // MARK: Close reasons

    @Test func leavingClosesBothSides() {
        let simulation = Self.paired(seed: 20)
        simulation.request(0) { machine, _ in machine.leave() }
        #expect(simulation.closeReason(0) == .left)
        #expect(simulation.closings[0] == .init(reason: .left, leavesRoom: true, keepsSession: false, flushesRelay: false))
        #expect(simulation.run { $0.closeReason(1) != nil })
        #expect(simulation.closeReason(1) == .peerLeft)
        #expect(simulation.events[0].suffix(2) == [.state(.closed), .closed(.left)])
        // Closed machines take nothing more.
        #expect(simulation.machines[0].handle(.roomReady, at: simulation.time).isEmpty)
        #expect(throws: ChatError.closed) { try simulation.send(0, "too late") }
    }

    @Test func aSideThatLeavesAcknowledgesWhatItGotFirst() throws {
        let simulation = Self.paired(seed: 29)
        let bye = try simulation.send(1, "bye")
        // Alice leaves as soon as the message is in, before her ack's delay has passed.
        #expect(simulation.run { $0.messages(0).count == 1 })
        #expect(simulation.timers[0][.ack] != nil, "the ack is still owed")
        simulation.request(0) { machine, _ in machine.leave() }
        #expect(simulation.closings[0] == .init(reason: .left, leavesRoom: true, keepsSession: false, flushesRelay: true))
        #expect(simulation.run { $0.closeReason(1) != nil })
        #expect(simulation.closeReason(1) == .peerLeft)
        #expect(simulation.delivered(1) == [bye], "Bob's last message shows delivered")
    }

    @Test func wrongWordsFailThePairingOnBothSides() throws {
        var random = SeededGenerator(seed: 99)
        let wrong = try Invite.generate(joinCode: "123456", using: &random)
        let simulation = SessionSimulation(seed: 21, joinerWords: wrong)
        simulation.start()
        #expect(simulation.run(for: .seconds(5)) { $0.closeReason(0) != nil && $0.closeReason(1) != nil })
        #expect(simulation.closeReason(0) == .pairingFailed && simulation.closeReason(1) == .pairingFailed)
        #expect(simulation.errors(0).contains(.pairingFailed) || simulation.errors(1).contains(.pairingFailed))
        #expect(simulation.closings.allSatisfy { $0?.leavesRoom == true && $0?.keepsSession == false })
    }

    @Test func aSilentPeerTimesOutThePairingWhenTheClockSaysSo() {
        let simulation = SessionSimulation(seed: 22) { $0.pairingTimeout = .seconds(30) }
        simulation.relayUp[1] = false
        simulation.start()
        #expect(!simulation.run(for: .seconds(29)) { $0.closeReason(0) != nil })
        #expect(simulation.run(for: .seconds(2)) { $0.closeReason(0) != nil })
        #expect(simulation.closeReason(0) == .pairingFailed)
        #expect(simulation.errors(0) == [.pairingTimedOut])
        #expect(simulation.closings[0]?.flushesRelay == true)
    }

    @Test func anExpiredInviteClosesTheCreator() {
        let simulation = SessionSimulation(seed: 23)
        simulation.feed(.inviteExpired, to: 1)
        #expect(simulation.closeReason(1) == nil, "the joiner has no invite to expire")
        simulation.feed(.inviteExpired, to: 0)
        #expect(simulation.closeReason(0) == .expired)
        #expect(simulation.errors(0) == [.expired])
        #expect(simulation.closings[0]?.leavesRoom == false)
    }

    @Test func aLostConnectionKeepsAnEstablishedSessionResumable() {
        let simulation = Self.paired(seed: 24)
        simulation.feed(.connectionLost, to: 0)
        #expect(simulation.closeReason(0) == .connectionLost)
        #expect(simulation.closings[0] == .init(reason: .connectionLost, leavesRoom: false, keepsSession: true, flushesRelay: false))
        #expect(simulation.errors(0) == [.connectionLost])
    }

    @Test func aConnectionLostBeforePairingKeepsNothing() {
        let simulation = SessionSimulation(seed: 25)
        simulation.start()
        simulation.feed(.connectionLost, to: 1)
        #expect(simulation.closings[1]?.keepsSession == false)
    }

    @Test func suspendingKeepsTheSessionAndAResumedMachineCarriesOn() throws {
        let simulation = Self.paired(seed: 26)
        for index in 0..<5 { try simulation.send(0, "before \(index)") }
        #expect(simulation.run { $0.delivered(0).count == 5 })
        simulation.relayUp[1] = false
        for index in 5..<8 { try simulation.send(0, "unsent \(index)") }
        let snapshot = try #require(simulation.machines[0].resumeSnapshot())
        simulation.request(0) { machine, _ in machine.suspend() }
        #expect(simulation.closeReason(0) == .suspended)
        #expect(simulation.closings[0]?.keepsSession == true)
        // A new machine from the snapshot (serialized and parsed, as the store keeps it).
        let parsed = try ChatSessionSnapshot(serialized: snapshot.serialized())
        var resumed = try ChatSessionMachine(
            resuming: parsed, lifetime: .thirtyDays, configuration: simulation.machines[0].configuration,
            random: SeededGenerator(seed: 5), at: simulation.time)
        let start = resumed.start(at: simulation.time)
        #expect(start.contains { if case .joinRoom = $0 { true } else { false } })
        #expect(resumed.state == .active && resumed.undeliveredCount == 3)
        #expect(resumed.security == simulation.machines[0].security)
    }

    @Test func aRefusedHandshakeFrameGoesOutAgainUnchangedWhenTheRoomIsBack() {
        let simulation = SessionSimulation(seed: 27)
        let time = simulation.time
        var alice = simulation.machines[0]
        _ = alice.start(at: time)
        _ = alice.handle(.codeAccepted(roomID: "room-1"), at: time)
        let first = Self.sends(alice.handle(.roomReady, at: time))
        #expect(first.count == 1)
        #expect(alice.inFlightCount(on: .relay) == 1)
        #expect(Self.sends(alice.handle(.sendFailed(path: .relay, sent: 0), at: time)).isEmpty)
        #expect(alice.inFlightCount(on: .relay) == 0)
        // Blocked until the socket is back: a send request queues, nothing goes out.
        #expect(Self.sends((try? alice.send(.text("queued"), at: time))?.actions ?? []).isEmpty)
        let again = Self.sends(alice.handle(.roomReady, at: time))
        #expect(again == first)
        // A batch reported sent leaves nothing in flight.
        _ = alice.handle(.sent(path: .relay, count: again.count), at: time)
        #expect(alice.inFlightCount(on: .relay) == 0)
    }

    static func sends(_ actions: [ChatSessionMachine.Action]) -> [ChatSessionMachine.Outgoing] {
        actions.compactMap { if case .send(let item, _) = $0 { item } else { nil } }
    }

    @Test func everyTimerIsCancelledWhenTheSessionCloses() {
        let simulation = Self.paired(seed: 28)
        simulation.request(1) { machine, _ in machine.leave() }
        #expect(simulation.timers[1].isEmpty)
    }
}
