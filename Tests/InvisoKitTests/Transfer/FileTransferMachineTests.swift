import Foundation
import InvisoCrypto
import InvisoKit
import InvisoTime
import Testing

/// The chat's file machine driven by hand: two machines, their control messages passed
/// between them, chunks "sent" by reporting them stored.
@Suite struct FileTransferMachineTests {
    static func offer(size: UInt64, chunk: UInt32 = 1_024) throws -> FileOffer {
        var generator = SystemRandomNumberGenerator()
        return try FileOffer(
            id: FileTransferID(), name: "../../x", size: size, chunkSize: chunk, key: SecretBytes(randomCount: 32, using: &generator))
    }

    static func at(_ seconds: Int) -> ClockInstant { .origin.advanced(by: .seconds(seconds)) }

    static func controls(_ actions: [FileTransferMachine.Action]) -> [FileControl] {
        actions.compactMap { if case .send(let control) = $0 { control } else { nil } }
    }

    static func chunks(_ actions: [FileTransferMachine.Action]) -> [Range<UInt64>] {
        actions.compactMap { if case .sendChunks(_, let range, _) = $0 { range } else { nil } }
    }

    static func generation(_ actions: [FileTransferMachine.Action]) -> Int? {
        actions.lazy.compactMap { if case .sendChunks(_, _, let generation) = $0 { generation } else { nil } }.first
    }

    @Test func aWholeTransferRunsInTheWindowAndEndsVerified() throws {
        let offer = try Self.offer(size: 100 * 1_024)  // 100 chunks
        var sender = FileTransferMachine()
        var receiver = FileTransferMachine()
        var toReceiver = Self.controls(sender.handle(.offered(offer), at: Self.at(0)))
        #expect(toReceiver == [.offer(offer)])
        let shown = receiver.handle(.control(toReceiver[0]), at: Self.at(0))
        // The name is shown sanitised; nothing starts before the user accepts.
        #expect(shown == [.emit(.incoming(FileTransferSummary(id: offer.id.description, name: "x", size: offer.size, sending: false)))])
        #expect(receiver.pendingOffer(nil) == offer)
        var toSender = Self.controls(receiver.handle(.accepted(offer.id, held: 0), at: Self.at(0)))
        #expect(toSender == [.answer(offer.id, accepted: true), .request(offer.id, from: 0)])
        var held: UInt64 = 0
        var digestAsked = false
        var verified: Bool?
        for step in 0..<1_000 {
            var actions: [FileTransferMachine.Action] = []
            for control in toSender { actions += sender.handle(.control(control), at: Self.at(step)) }
            toSender = []
            if actions.contains(.sendDigest(offer.id)) { digestAsked = true }
            // The path takes every batch at once.
            var sentRanges = Self.chunks(actions)
            while let generation = Self.generation(actions), !sentRanges.isEmpty {
                actions = sender.handle(.batchWritten(offer.id, generation: generation), at: Self.at(step))
                sentRanges += Self.chunks(actions)
                if actions.contains(.sendDigest(offer.id)) { digestAsked = true }
                if Self.chunks(actions).isEmpty { break }
            }
            if actions.contains(.sendDigest(offer.id)) { digestAsked = true }
            // In the window: never more than 12 chunks (the relay's) past what is held.
            for range in sentRanges {
                #expect(range.upperBound <= held + 12)
                for index in range where index == held {
                    held += 1
                    toSender += Self.controls(receiver.handle(.chunkStored(offer.id, held: held), at: Self.at(step)))
                }
            }
            if digestAsked, verified == nil {
                toReceiver = [.digest(offer.id, sha256: Array(repeating: 7, count: 32))]
                let finishing = receiver.handle(.control(toReceiver[0]), at: Self.at(step))
                if finishing.contains(.finish(offer.id, sha256: Array(repeating: 7, count: 32))) {
                    toSender += Self.controls(receiver.handle(.finished(offer.id, path: "/d/x", sha256: Array(repeating: 7, count: 32)), at: Self.at(step)))
                    verified = true
                }
            }
            if toSender.contains(.complete(offer.id, verified: true)) {
                let end = sender.handle(.control(.complete(offer.id, verified: true)), at: Self.at(step))
                #expect(end.contains(.emit(.sent(id: offer.id.description, verified: true))))
                break
            }
        }
        #expect(held == 100)
        #expect(sender.isIdle && receiver.isIdle)
    }

    /// `--file-rate`: a quarter second's burst at once, then a chunk only as its credit
    /// comes in, woken by the timer; the average never beats the rate.
    @Test func aRateCapPacesTheChunksAndWakesWhenCreditReturns() throws {
        let offer = try Self.offer(size: 400 * 1_024)  // 400 chunks of 1 KiB
        var configuration = FileTransferMachine.Configuration()
        configuration.maxBytesPerSecond = 16 * 1_024  // 16 chunks a second; a burst of 4
        configuration.directWindow = 1_000
        var sender = FileTransferMachine(configuration: configuration)
        _ = sender.handle(.offered(offer), at: .origin)
        _ = sender.handle(.pathChanged(direct: true), at: .origin)
        var actions = sender.handle(.control(.request(offer.id, from: 0)), at: .origin)
        #expect(Self.chunks(actions) == [0..<4])
        var sent: UInt64 = 4
        var now = ClockInstant.origin
        var wakes = 0
        var armed: ClockInstant?
        // Batches are written at once; the timer is the only thing that moves the clock.
        while sent < 64 {
            if let at = actions.lazy.compactMap({ if case .arm(let at) = $0 { at } else { nil } }).last { armed = at }
            if let generation = Self.generation(actions) {
                actions = sender.handle(.batchWritten(offer.id, generation: generation), at: now)
                sent = Self.chunks(actions).last?.upperBound ?? sent
                continue
            }
            let wake = try #require(armed)
            armed = nil
            #expect(wake > now && now.duration(to: wake) <= .milliseconds(63))
            now = wake
            wakes += 1
            actions = sender.handle(.timerFired, at: now)
            sent = Self.chunks(actions).last?.upperBound ?? sent
        }
        // 60 chunks past the burst take 60/16 s; never faster.
        #expect(ClockInstant.origin.duration(to: now) >= .milliseconds(3_700))
        #expect(ClockInstant.origin.duration(to: now) <= .milliseconds(3_800))
        #expect(wakes >= 60)
    }

    @Test func withoutARateTheWholeWindowLeavesAtOnce() throws {
        let offer = try Self.offer(size: 400 * 1_024)
        var sender = FileTransferMachine()
        _ = sender.handle(.offered(offer), at: .origin)
        let actions = sender.handle(.control(.request(offer.id, from: 0)), at: .origin)
        #expect(Self.chunks(actions) == [0..<8, 8..<12])
        #expect(!actions.contains { if case .arm(let at) = $0 { at < ClockInstant.origin.advanced(by: .seconds(5)) } else { false } })
    }

    @Test func aPathChangeSendsAgainFromWhatTheReceiverHolds() throws {
        let offer = try Self.offer(size: 40 * 1_024)
        var sender = FileTransferMachine()
        _ = sender.handle(.offered(offer), at: Self.at(0))
        let first = sender.handle(.control(.request(offer.id, from: 0)), at: Self.at(0))
        #expect(Self.chunks(first) == [0..<8, 8..<12])
        _ = sender.handle(.control(.progress(offer.id, held: 4)), at: Self.at(1))
        // The direct path's window is wider; chunks still on the relay are sent again.
        let moved = sender.handle(.pathChanged(direct: true), at: Self.at(1))
        #expect(Self.chunks(moved) == [4..<12, 12..<20])
        // A report from the old path's batch is stale.
        #expect(sender.handle(.batchWritten(offer.id, generation: Self.generation(first)!), at: Self.at(1)).isEmpty)
    }

    @Test func aStallSendsAgainAndAGapAsksOncePerInterval() throws {
        let offer = try Self.offer(size: 40 * 1_024)
        var sender = FileTransferMachine()
        _ = sender.handle(.offered(offer), at: Self.at(0))
        let first = sender.handle(.control(.request(offer.id, from: 0)), at: Self.at(0))
        #expect(first.contains(.arm(at: Self.at(5))))
        // Nothing came back for the stall interval: from `acked` again.
        #expect(Self.chunks(sender.handle(.timerFired, at: Self.at(5))) == [0..<8, 8..<12])

        var receiver = FileTransferMachine()
        _ = receiver.handle(.control(.offer(offer)), at: Self.at(0))
        _ = receiver.handle(.accepted(offer.id, held: 3), at: Self.at(0))
        #expect(Self.controls(receiver.handle(.chunkGap(offer.id), at: Self.at(1))) == [.request(offer.id, from: 3)])
        #expect(Self.controls(receiver.handle(.chunkGap(offer.id), at: Self.at(2))).isEmpty)
        #expect(Self.controls(receiver.handle(.chunkGap(offer.id), at: Self.at(7))) == [.request(offer.id, from: 3)])
    }

    @Test func aRestartedReceiverAsksFromItsPartialFileAndFinishesAHeldFile() throws {
        let offer = try Self.offer(size: 10 * 1_024)
        var receiver = FileTransferMachine()
        _ = receiver.handle(.restoredIncoming(offer, held: 6, digest: nil), at: Self.at(0))
        #expect(Self.controls(receiver.handle(.resync, at: Self.at(0))) == [.request(offer.id, from: 6)])

        let digest = [UInt8](repeating: 1, count: 32)
        var complete = FileTransferMachine()
        _ = complete.handle(.restoredIncoming(offer, held: 10, digest: digest), at: Self.at(0))
        #expect(complete.handle(.resync, at: Self.at(0)).contains(.finish(offer.id, sha256: digest)))
        // Once: a second resync does not finish it twice.
        #expect(!complete.handle(.resync, at: Self.at(0)).contains(.finish(offer.id, sha256: digest)))
    }

    @Test func refusalsCancelsAndStrangersRequestsEndCleanly() throws {
        let offer = try Self.offer(size: 4_096)
        var sender = FileTransferMachine()
        _ = sender.handle(.offered(offer), at: Self.at(0))
        let refused = sender.handle(.control(.answer(offer.id, accepted: false)), at: Self.at(0))
        #expect(refused.contains(.close(offer.id, discard: false)))
        #expect(refused.contains(.emit(.refused(id: offer.id.description))))
        #expect(sender.isIdle)
        // A request for a transfer we do not have: the receiver is told to stop.
        let stranger = try FileTransferID(Array(repeating: 9, count: 16))
        #expect(Self.controls(sender.handle(.control(.request(stranger, from: 0)), at: Self.at(0))) == [.cancel(stranger)])
        // Progress past the end, or for nothing, changes nothing.
        _ = sender.handle(.offered(offer), at: Self.at(0))
        #expect(sender.handle(.control(.progress(offer.id, held: 99)), at: Self.at(0)).isEmpty)
        #expect(sender.handle(.control(.request(offer.id, from: 99)), at: Self.at(0)).isEmpty)

        var receiver = FileTransferMachine()
        _ = receiver.handle(.control(.offer(offer)), at: Self.at(0))
        _ = receiver.handle(.control(.offer(offer)), at: Self.at(0))
        #expect(receiver.transfers.isEmpty && receiver.pendingOffer(nil) == offer)
        _ = receiver.handle(.accepted(offer.id, held: 0), at: Self.at(0))
        let cancelled = receiver.handle(.control(.cancel(offer.id)), at: Self.at(0))
        #expect(cancelled.contains(.close(offer.id, discard: true)))
        #expect(cancelled.contains(.emit(.cancelled(id: offer.id.description, byPeer: true))))
        #expect(receiver.isIdle)
    }

    @Test func controlMessagesRoundTripAndHostileOnesAreText() throws {
        let offer = try Self.offer(size: 1 << 20, chunk: 60 * 1_024)
        let id = offer.id
        let all: [FileControl] = [
            .offer(offer), .answer(id, accepted: true), .answer(id, accepted: false), .request(id, from: 7),
            .progress(id, held: 9), .digest(id, sha256: Array(repeating: 3, count: 32)), .complete(id, verified: false),
            .cancel(id),
        ]
        for control in all {
            let payload = ChatPayload.file(control)
            #expect(ChatPayload(plaintext: payload.plaintext) == payload)
        }
        // Bad fields make it a text, as the app shows unknown objects.
        for hostile in [
            #"{"type":"file_request","id":"zz","from":1}"#, #"{"type":"file_request","id":"00","from":1}"#,
            #"{"type":"file_progress","id":"00000000000000000000000000000000","held":-1}"#,
            #"{"type":"file_digest","id":"00000000000000000000000000000000","sha256":"00"}"#,
            #"{"type":"file_offer","offer":"0011"}"#, #"{"type":"file_answer","id":"00000000000000000000000000000000"}"#,
        ] {
            #expect(ChatPayload(plaintext: Array(hostile.utf8)) == .text(hostile))
        }
    }

    @Test func chunkFramesRoundTripAndRefuseBadLengths() throws {
        let id = FileTransferID()
        let frame = FileChunkFrame(transfer: id, index: 0x0102_0304_0506_0708, sealed: Array(repeating: 5, count: 40))
        let bytes = frame.encoded()
        #expect(bytes[0] == 0x04 && bytes.count == FileChunkFrame.headerBytes + 40)
        #expect(try FileChunkFrame(decoding: bytes) == frame)
        // The chat's chunk size fits the server's 64 KiB message limit, sealed and framed.
        #expect(FileChunkFrame.headerBytes + Int(FileChunkFrame.chatChunkSize) + FileChunkCipher.overhead <= 65_536)
        for bad in [Array(bytes.prefix(FileChunkFrame.headerBytes + 15)), [0x03] + bytes.dropFirst(), []] {
            #expect(throws: FileTransferError.self) { try FileChunkFrame(decoding: bad) }
        }
    }
}
