import InvisoKit
import InvisoNearby
import Testing

/// Two connection machines joined by an in-memory pipe.
struct Pipe {
    var dialler: NearbyConnection
    var listener: NearbyConnection
    var diallerLog: [NearbyConnection.Action] = []
    var listenerLog: [NearbyConnection.Action] = []

    init(alice: NearbyIdentity, bob: NearbyIdentity, expecting: NearbyConnection.Expectation = .anyone) throws {
        dialler = NearbyConnection(
            role: .initiator, handshake: try NearbyHandshake(role: .initiator, identity: alice, name: "alice"), expecting: expecting)
        listener = NearbyConnection(role: .responder, handshake: try NearbyHandshake(role: .responder, identity: bob, name: "bob"))
    }

    /// Runs `actions` from one side, delivering writes to the other until nothing moves.
    mutating func deliver(_ actions: [NearbyConnection.Action], fromDialler: Bool) {
        var pending = [(actions, fromDialler)]
        while !pending.isEmpty {
            let (batch, fromD) = pending.removeFirst()
            if fromD { diallerLog += batch } else { listenerLog += batch }
            for action in batch {
                guard case .write(let bytes) = action else { continue }
                let reply = fromD ? listener.receive(bytes) : dialler.receive(bytes)
                pending.append((reply, !fromD))
            }
        }
    }
}

@Suite struct SessionTests {
    let alice = NearbyIdentity()
    let bob = NearbyIdentity()

    @Test func requestAcceptedThenRecordsFlowBothWays() throws {
        var pipe = try Pipe(alice: alice, bob: bob, expecting: .fingerprint(bob.publicKey.shortFingerprint))
        pipe.deliver(pipe.dialler.start(), fromDialler: true)
        #expect(pipe.listener.phase == .deciding && pipe.dialler.phase == .requesting)
        let secured = try #require(pipe.listener.peer)
        #expect(pipe.listenerLog.contains(.secured(secured)))
        #expect(pipe.listener.peer?.identity == alice.publicKey && pipe.dialler.peer?.identity == bob.publicKey)
        pipe.deliver(pipe.listener.accept(), fromDialler: false)
        #expect(pipe.dialler.phase == .open && pipe.listener.phase == .open)
        #expect(pipe.diallerLog.contains(.opened) && pipe.listenerLog.contains(.opened))
        pipe.deliver(pipe.dialler.send(.ack(0)), fromDialler: true)
        #expect(pipe.listenerLog.last == .record(.ack(0)))
        let id = try FileTransferID([UInt8](repeating: 1, count: 16))
        pipe.deliver(pipe.listener.send(.fileRequest(id, fromChunk: 4)), fromDialler: false)
        #expect(pipe.diallerLog.last == .record(.fileRequest(id, fromChunk: 4)))
        // A chunk frame beside the channel reaches the open connection's driver as is.
        let sealed = [UInt8](repeating: 9, count: 40)
        let frame = NearbyFrameDecoder.chunkHeader(transfer: id, index: 4, sealedCount: sealed.count) + sealed
        #expect(pipe.listener.receive(frame) == [.chunk(NearbyChunk(transfer: id, index: 4, sealed: sealed))])
    }

    /// A chunk frame before the connection opened (the listener still deciding) closes it.
    @Test func aChunkBeforeTheConnectionOpenedCloses() throws {
        var pipe = try Pipe(alice: alice, bob: bob)
        pipe.deliver(pipe.dialler.start(), fromDialler: true)
        #expect(pipe.listener.phase == .deciding)
        let id = FileTransferID()
        let frame = NearbyFrameDecoder.chunkHeader(transfer: id, index: 0, sealedCount: 40) + [UInt8](repeating: 1, count: 40)
        #expect(pipe.listener.receive(frame) == [.closed(.failed(NearbyError(.unexpectedMessage, "file chunk before the connection opened")))])
        #expect(pipe.listener.phase == .closed)
    }

    /// A known peer is accepted as soon as the handshake names it, which can be before its
    /// request record arrives: the late request is taken, once.
    @Test func aRequestArrivingAfterTheAcceptIsTaken() throws {
        var pipe = try Pipe(alice: alice, bob: bob)
        func writes(_ actions: [NearbyConnection.Action]) -> [[UInt8]] {
            actions.compactMap { if case .write(let bytes) = $0 { bytes } else { nil } }
        }
        let one = writes(pipe.dialler.start())
        let two = writes(pipe.listener.receive(one[0]))
        let third = writes(pipe.dialler.receive(two[0]))
        #expect(third.count == 2)  // message 3, then the sealed request
        _ = pipe.listener.receive(third[0])
        #expect(pipe.listener.phase == .deciding)
        let accepted = writes(pipe.listener.accept())
        #expect(pipe.listener.receive(third[1]).isEmpty && pipe.listener.phase == .open)
        // The dialler opens on the accept, and records flow.
        #expect(pipe.dialler.receive(accepted[0]) == [.opened])
        let ack = writes(pipe.dialler.send(.ack(0)))
        #expect(pipe.listener.receive(ack[0]) == [.record(.ack(0))])
    }

    @Test func rejectedRequestClosesBothEnds() throws {
        var pipe = try Pipe(alice: alice, bob: bob)
        pipe.deliver(pipe.dialler.start(), fromDialler: true)
        pipe.deliver(pipe.listener.reject(), fromDialler: false)
        #expect(pipe.diallerLog.last == .closed(.rejected))
        #expect(pipe.listenerLog.last == .closed(.local))
        #expect(pipe.dialler.send(.ack(1)).isEmpty && pipe.dialler.receive([0, 1, 0]).isEmpty)
    }

    @Test func anIdentityOtherThanTheExpectedOneIsRefused() throws {
        var pinned = try Pipe(alice: alice, bob: bob, expecting: .identity(NearbyIdentity().publicKey))
        pinned.deliver(pinned.dialler.start(), fromDialler: true)
        #expect(pinned.diallerLog.contains(.closed(.identityChanged(presented: bob.publicKey))))
        var advertised = try Pipe(alice: alice, bob: bob, expecting: .fingerprint("0000000000000000"))
        advertised.deliver(advertised.dialler.start(), fromDialler: true)
        #expect(advertised.diallerLog.contains(.closed(.identityChanged(presented: bob.publicKey))))
    }

    /// A proxy that terminates both connections with its own identity (the only way to
    /// pass the signed handshake) is caught by the advertised fingerprint, and when the
    /// dialler expects anyone, by the safety numbers the two victims compare.
    @Test func aKeySubstitutingProxyIsDetected() throws {
        let mallory = NearbyIdentity()
        var toMallory = try Pipe(alice: alice, bob: mallory, expecting: .fingerprint(bob.publicKey.shortFingerprint))
        toMallory.deliver(toMallory.dialler.start(), fromDialler: true)
        #expect(toMallory.diallerLog.contains(.closed(.identityChanged(presented: mallory.publicKey))))

        var aliceSide = try Pipe(alice: alice, bob: mallory)
        aliceSide.deliver(aliceSide.dialler.start(), fromDialler: true)
        var bobSide = try Pipe(alice: mallory, bob: bob)
        bobSide.deliver(bobSide.dialler.start(), fromDialler: true)
        let alicesNumber = NearbySafetyNumber(local: alice.publicKey, remote: try #require(aliceSide.dialler.peer).identity)
        let bobsNumber = NearbySafetyNumber(local: bob.publicKey, remote: try #require(bobSide.listener.peer).identity)
        #expect(alicesNumber.digits != bobsNumber.digits)
        // Without the proxy, they agree.
        var direct = try Pipe(alice: alice, bob: bob)
        direct.deliver(direct.dialler.start(), fromDialler: true)
        #expect(NearbySafetyNumber(local: alice.publicKey, remote: try #require(direct.dialler.peer).identity).digits
            == NearbySafetyNumber(local: bob.publicKey, remote: try #require(direct.listener.peer).identity).digits)
    }

    @Test func garbageAndOutOfPhaseRecordsClose() throws {
        var pipe = try Pipe(alice: alice, bob: bob)
        _ = pipe.dialler.start()
        let last = pipe.listener.receive([0, 3, 1, 2, 3]).last
        let failed = if case .closed(.failed) = last { true } else { false }
        #expect(failed)
        #expect(pipe.listener.receive([0, 1, 0]).isEmpty)

        // The dialler's open connection refuses a second accept.
        var open = try Pipe(alice: alice, bob: bob)
        open.deliver(open.dialler.start(), fromDialler: true)
        open.deliver(open.listener.accept(), fromDialler: false)
        #expect(open.listener.accept().isEmpty)
    }

    // MARK: - Conversation

    static func text(_ body: String) throws -> NearbyPayload {
        .text(try NearbyText(id: (0..<16).map { _ in UInt8.random(in: 0...255) }, sentAt: 0, lifetime: .never, body: body))
    }

    @Test func outboxWaitsWhileAwayAndIsDeliveredOnceInOrder() throws {
        var a = NearbyConversation()
        var b = NearbyConversation()
        // Away: queued, nothing sent.
        for body in ["one", "two", "three"] { #expect(try a.enqueue(try Self.text(body)).records.isEmpty) }
        // Connected: all three go; one is lost in transit and the connection drops.
        var records = a.connected()
        _ = b.connected()
        #expect(records.count == 3)
        records.remove(at: 1)
        var delivered: [String] = []
        for record in records {
            let (received, _) = try b.receive(record)
            for (_, payload) in received.deliveries { if case .text(let text) = payload { delivered.append(text.body) } }
        }
        #expect(delivered == ["one"])  // "three" waits behind the gap
        a.disconnected()
        b.disconnected()
        // Reconnected: everything unacknowledged goes again; duplicates are dropped.
        let again = a.connected()
        let ack = b.connected()
        #expect(again.count == 3)
        for record in again {
            let (received, _) = try b.receive(record)
            for (_, payload) in received.deliveries { if case .text(let text) = payload { delivered.append(text.body) } }
        }
        #expect(delivered == ["one", "two", "three"])
        // Acks drain the outbox and report what was delivered.
        var acked: [UInt64] = []
        for record in ack + b.ackRecord() { acked += try a.receive(record).0.delivered.map(Array.init) ?? [] }
        #expect(acked == [1, 2, 3] && a.unacknowledgedCount == 0)
    }

    @Test func lifetimeChangesOnlyWhenBothAgree() throws {
        var a = NearbyConversation()
        var b = NearbyConversation()
        _ = a.connected()
        _ = b.connected()
        func flow(_ records: [NearbyRecord], into conversation: inout NearbyConversation) throws -> NearbyLifetime? {
            var agreed: NearbyLifetime?
            for record in records { agreed = try conversation.receive(record).0.lifetimeAgreed ?? agreed }
            return agreed
        }
        _ = try flow(try a.proposeLifetime(.day), into: &b)
        #expect(b.theirProposal == .day && a.lifetime == .never && b.lifetime == .never)
        #expect(try flow(try b.answerLifetime(accept: false), into: &a) == nil)
        #expect(a.lifetime == .never && a.ourProposal == nil)
        _ = try flow(try a.proposeLifetime(.week), into: &b)
        // Proposing the same value counts as yes.
        #expect(try flow(try b.proposeLifetime(.week), into: &a) == .week)
        #expect(a.lifetime == .week && b.lifetime == .week)
    }

    @Test func aMalformedPayloadChangesNothing() throws {
        var b = NearbyConversation()
        _ = b.connected()
        #expect(throws: NearbyError.self) { _ = try b.receive(.data(seq: 1, payload: [0xEE])) }
        // The same seq with a valid payload is still accepted: the bad one left no trace.
        let (received, _) = try b.receive(.data(seq: 1, payload: try Self.text("ok").encoded()))
        #expect(received.deliveries.count == 1)
        #expect(throws: ReliableError.self) { _ = try b.receive(.ack(5)) }
    }
}
