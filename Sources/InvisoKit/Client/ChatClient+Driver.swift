import Foundation
import InvisoStore
import InvisoTime
import InvisoWire
import Logging
import Synchronization

// MARK: - Running the machine: the task group, actions, paths and timers

extension ChatClient: TimerDriving {
    /// Starts the session's I/O around a new machine: the task group, the signaling
    /// socket with the relay path, the expiry sweep; then the machine's first actions.
    func begin(_ machine: ChatSessionMachine) async {
        self.machine = machine
        startRunning()
        startSignaling()
        if store != nil { spawn { [weak self] in await self?.expiryLoop() } }
        // A resumed session's transfers, before its first actions ask for what is missing.
        if machine.state == .active { await restoreFiles() }
        let actions = step { $0.start(at: now) }
        spawn { [weak self, drainRequests] in
            for await _ in drainRequests { await self?.drainSubmissions() }
        }
        await perform(actions)
    }

    /// Runs one step of the machine: first the messages other threads submitted, in order
    /// (so they get the ids they were promised), then `body`; then brings the submissions'
    /// view of the machine up to date. The lock covers the step only; the caller carries
    /// out the actions after it.
    func step<Failure: Error>(
        _ body: (inout ChatSessionMachine) throws(Failure) -> [ChatSessionMachine.Action]
    ) throws(Failure) -> [ChatSessionMachine.Action] {
        let time = now
        counters.lastStep = time.now
        return try submissions.withLock { queue throws(Failure) -> [ChatSessionMachine.Action] in
            try Self.step(&machine!, &queue, at: time, body)
        }
    }

    /// ``step(_:)`` on the machine in place (reading `machine!` inside the lock's closure
    /// copied the whole machine, several times a step).
    private static func step<Failure: Error>(
        _ machine: inout ChatSessionMachine, _ queue: inout MessageSubmissions, at time: ChatTime,
        _ body: (inout ChatSessionMachine) throws(Failure) -> [ChatSessionMachine.Action]
    ) throws(Failure) -> [ChatSessionMachine.Action] {
        var actions: [ChatSessionMachine.Action] = []
        let pending = queue.take()
        // It fails only once the session closed: those messages end with it.
        if !pending.isEmpty, let sent = try? machine.send(contentsOf: pending, at: time) { actions = sent.actions }
        defer { queue.sync(nextMessageID: machine.nextMessageID, outboxRoom: machine.outboxRoom, isClosed: machine.state == .closed) }
        actions += try body(&machine)
        return actions
    }

    /// Hands the messages other threads submitted to the machine.
    func drainSubmissions() async {
        guard machine != nil else { return }
        await perform(step { _ in [] })
    }

    /// The one task group every child task of the session runs in; it ends when the
    /// session finishes (``finish(_:)`` cancels it).
    func startRunning() {
        let (stream, continuation) = AsyncStream<@Sendable () async -> Void>.makeStream(bufferingPolicy: .unbounded)
        jobs = continuation
        // Every child prefers the actor's event loop (and inherits that preference).
        runTask = Task(executorPreference: taskExecutor) {
            await withDiscardingTaskGroup { group in
                for await job in stream { group.addTask { await job() } }
            }
        }
    }

    /// Runs `job` as a child of the session's task group (dropped once it finished).
    func spawn(_ job: @escaping @Sendable () async -> Void) {
        jobs?.yield(job)
    }

    /// Feeds an event to the machine and carries out its actions.
    func feed(_ event: ChatSessionMachine.Event) async {
        guard machine != nil else { return }
        let actions = step { $0.handle(event, at: now) }
        await perform(actions)
    }

    /// Carries out the machine's actions in order.
    ///
    /// When a `saveSnapshot` fails, the frames after it in this batch were sealed with
    /// state the store does not hold: they are not sent (a resumed session would seal with
    /// the same keys again); the machine hears that the path refused them and seals those
    /// messages anew later.
    func perform(_ actions: [ChatSessionMachine.Action]) async {
        var unsaved: Set<ChatSessionMachine.PathID> = []
        var saveFailed = false
        defer {
            if !unsaved.isEmpty {
                let paths = unsaved
                spawn { [weak self] in
                    for path in paths.sorted(by: { $0.rawValue < $1.rawValue }) { await self?.refuseUnsaved(path) }
                }
            }
        }
        for action in actions {
            switch action {
            case .send(.frame, let path) where saveFailed:
                unsaved.insert(path)
            case .send(let item, let path):
                enqueue(item, on: path)
            case .emit(let event):
                if await fileEvent(event) { break }
                continuation.yield(event)
                if case .closed = event { continuation.finish() }
            case .arm(let timer, let deadline):
                arm(timer, at: deadline)
            case .cancel(let timer):
                timers.cancel(timer)
            case .joinRoom(let roomID):
                // Not awaited here: the answer (`room_ready`, then the peer's frames) may
                // come back before the call returns, and the machine's events must not be
                // handled in the middle of carrying out an earlier batch of its actions.
                if let signaling, let deviceID { spawn { try? await signaling.join(roomID: roomID, deviceID: deviceID) } }
            case .updateSession(let update):
                updateStoredSession(update)
            case .saveSnapshot:
                saveFailed = !saveSnapshot()
            case .snapshotChanged:
                guard !snapshotSavePending else { break }
                snapshotSavePending = true
                spawn { [weak self] in await self?.saveSnapshot() }
            case .storeSent(let id, let payload):
                if let kind = Self.storedKind(payload) { storeMessage(id: "s\(id)", direction: .sent, kind: kind, payload: payload) }
            case .storeReceived(let id, let payload):
                // The store already holds it: a resumed session got it again, because the
                // state saved before the process stopped predates it (`docs/client.md`).
                var isNew = true
                if let kind = Self.storedKind(payload) {
                    isNew = storeMessage(id: "r\(id)", direction: .received, kind: kind, payload: payload)
                }
                if case .profile(let name) = payload { storePeerName(name) }
                await feed(.receivedStored(id: id, payload: payload, isNew: isNew))
            case .markDelivered(let ids):
                if let store, let sessionID {
                    for id in ids { _ = try? store.markDelivered(messageID: "s\(id)", sessionID: sessionID) }
                }
            case .pinIdentity(let peer, let security, let isVerified):
                if let store, let sessionID {
                    try? store.savePinnedIdentity(
                        PinnedIdentity(publicKey: Data(peer), isVerified: isVerified), sessionID: sessionID)
                    // The digits take ~4 ms: computed off the session's loop and added to the
                    // pin after, so this step's frames (the joiner's confirmation, the
                    // creator's first messages) do not wait for them.
                    if let security {
                        pinning = Task.detached(priority: .utility) {
                            let pin = PinnedIdentity(publicKey: Data(peer), safetyNumber: security.safetyNumber, isVerified: isVerified)
                            try? store.savePinnedIdentity(pin, sessionID: sessionID)
                        }
                    }
                }
                if let version = machine?.security?.version {
                    logger.info("secure channel established", metadata: ["protocol": "\(version)"])
                }
            case .setLifetime(let lifetime):
                if let store, let sessionID { try? store.setLifetime(lifetime, sessionID: sessionID) }
            case .openDirectListener(let key, let role):
                openDirectListener(key: key, role: role)
            case .connectDirect(let candidates):
                connectDirect(to: candidates)
            case .closeDirectListener:
                let listener = directListener
                directListener = nil
                if let listener { spawn { await listener.close() } }
            case .finish(let closing):
                await finish(closing)
            }
        }
    }

    // MARK: Timers

    func timerFired(_ timer: ChatSessionMachine.Timer, generation: UInt64) async {
        guard timers.fire(timer, generation: generation) else { return }
        counters.timerFires += 1
        await feed(.timerFired(timer))
    }

    // MARK: Paths

    /// Adds a path (a direct connection) and moves sending to it: frames still arriving on
    /// the old path are read and handled, every unacknowledged message is sent again on
    /// the new one (the peer drops duplicates and restores the order), and
    /// ``ChatEvent/path(_:)`` reports the change. When the new path's stream finishes,
    /// sending falls back to the relay.
    ///
    /// - Throws: ``ChatError/closed`` after the session ended, ``ChatError/wrongState``
    ///   before it started.
    public func addPath(_ transport: any FrameTransport) async throws(ChatError) {
        guard machine != nil, state != .closed else { throw state == .closed ? .closed : .wrongState }
        let id = ChatSessionMachine.PathID(nextPathID)
        nextPathID += 1
        register(transport, as: id)
        spawn { [weak self] in
            for await frame in transport.incoming {
                guard let self else { return }
                await self.received(frame, on: id, kind: transport.path)
            }
            await self?.pathEnded(id)
        }
        await feed(.pathUp(id, transport.path))
    }

    /// Sets up a path's send queue and the child task that drains it.
    func register(_ transport: any FrameTransport, as id: ChatSessionMachine.PathID) {
        let (doorbell, ring) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        paths[id] = PathSender(transport: transport, doorbell: ring)
        let signaling = signaling
        spawn { [weak self] in
            for await _ in doorbell {
                while let self {
                    if let batch = await self.takeQueued(id), !batch.isEmpty {
                        let (sent, failed) = await Self.send(batch, on: transport, signaling: signaling)
                        await self.batchEnded(id, sent: sent, failed: failed)
                    } else if let chunks = await self.takeChunks(id) {
                        // File chunks go after the session's own frames, a batch at a time.
                        let result = await transport.send(contentsOf: chunks.frames)
                        await self.chunkBatchEnded(chunks, failed: result.failure != nil)
                    } else {
                        break
                    }
                }
            }
        }
    }

    /// Sends a batch in order — each run of frames as one write of the transport, each
    /// signal on its own — and stops at the first failure.
    private static func send(
        _ batch: [ChatSessionMachine.Outgoing], on transport: any FrameTransport, signaling: SignalingClient?
    ) async -> (sent: Int, failed: Bool) {
        var sent = 0
        var frames: [[UInt8]] = []
        func flush() async -> Bool {
            guard !frames.isEmpty else { return true }
            let result = await transport.send(contentsOf: frames)
            sent += result.sent
            frames.removeAll(keepingCapacity: true)
            return result.failure == nil
        }
        for item in batch {
            switch item {
            case .frame(let frame):
                frames.append(frame)
            case .signal(let message):
                guard await flush(), let signaling else { return (sent, true) }
                do { try await signaling.send(message) } catch { return (sent, true) }
                sent += 1
            }
        }
        let flushed = await flush()
        return (sent, !flushed)
    }

    private func enqueue(_ item: ChatSessionMachine.Outgoing, on path: ChatSessionMachine.PathID) {
        guard paths[path] != nil else { return }
        if case .frame(let frame) = item { frameTap?(paths[path]!.transport.path, frame) }
        paths[path]!.queued.append(item)
        counters.queued[path, default: 0] += 1
        paths[path]!.doorbell.yield()
    }

    private func takeQueued(_ path: ChatSessionMachine.PathID) -> [ChatSessionMachine.Outgoing]? {
        guard paths[path] != nil else { return nil }
        defer { paths[path]!.queued.removeAll(keepingCapacity: true) }
        if !paths[path]!.queued.isEmpty { paths[path]!.sending = true }
        return paths[path]!.queued
    }

    private func takeChunks(_ path: ChatSessionMachine.PathID) -> ChunkBatch? {
        guard paths[path] != nil, !paths[path]!.chunks.isEmpty else { return nil }
        return paths[path]!.chunks.removeFirst()
    }

    /// Frames sealed with unsaved state were withheld on `path`: the path "refused" them
    /// (with everything still queued there), so the machine queues them again.
    private func refuseUnsaved(_ path: ChatSessionMachine.PathID) async {
        guard paths[path] != nil else { return }
        await batchEnded(path, sent: 0, failed: true)
    }

    private func batchEnded(_ path: ChatSessionMachine.PathID, sent: Int, failed: Bool) async {
        paths[path]?.sending = false
        counters.sent[path, default: 0] += sent
        if failed { counters.failedBatches[path, default: 0] += 1 }
        if path == .relay {
            for waiter in relayBatchWaiters { waiter.resume() }
            relayBatchWaiters.removeAll()
        }
        guard failed else {
            await feed(.sent(path: path, count: sent))
            return
        }
        // The machine takes back everything after the refused frame, queued or not.
        paths[path]?.queued.removeAll()
        await feed(.sendFailed(path: path, sent: sent))
    }

    func received(_ frame: [UInt8], on path: ChatSessionMachine.PathID, kind: ChatPath) async {
        frameTap?(kind, frame)
        counters.received[path, default: 0] += 1
        if frame.first == V2FrameType.fileChunk.rawValue { return await receivedChunk(frame) }
        await feed(.frame(frame, path: path))
    }

    private func pathEnded(_ path: ChatSessionMachine.PathID) async {
        guard let sender = paths.removeValue(forKey: path) else { return }
        sender.doorbell.finish()
        for batch in sender.chunks { await chunkBatchEnded(batch, failed: true) }
        await feed(.pathDown(path))
    }

    // MARK: Ending

    /// Ends the session as the machine decided: lets a pairing abort out, leaves or closes
    /// the signaling socket, deletes the room and purges the device (leaving), wipes or
    /// keeps the stored session, closes every path, then ends the task group.
    private func finish(_ closing: ChatSessionMachine.Closing) async {
        if closing.flushesRelay, let relay {
            // The abort frame goes out before `leave_room`: after the batch the relay's
            // sender is writing (if any), then what is still queued.
            if paths[.relay]?.sending == true {
                await withCheckedContinuation { relayBatchWaiters.append($0) }
            }
            let queued = paths[.relay]?.queued ?? []
            paths[.relay]?.queued.removeAll()
            for case .frame(let frame) in queued { try? await relay.send(frame) }
        }
        if closing.leavesRoom { await signaling?.leave() } else { await signaling?.close() }
        if closing.leavesRoom, let deviceID {
            if let roomID { try? await api.deleteRoom(roomID: roomID, deviceID: deviceID) }
            _ = try? await api.purge(deviceIDs: [deviceID])
        }
        // A kept session keeps its safety number; a left one is wiped after the pin.
        await pinning?.value
        if let store, let sessionID, !closing.keepsSession {
            try? store.leaveSession(id: sessionID)
        }
        let listener = directListener
        directListener = nil
        await listener?.close()
        for sender in paths.values {
            sender.doorbell.finish()
            await sender.transport.close()
        }
        paths.removeAll()
        // Ended only now: this may run in one of the group's tasks, whose I/O above would
        // not go out once cancelled.
        jobs?.finish()
        jobs = nil
        runTask?.cancel()
        logger.info("session closed", metadata: ["reason": "\(closing.reason)"])
    }

    /// ``leave()`` or ``suspend()`` before anything started: the events end.
    func closeIdle(_ reason: ChatCloseReason) {
        guard preState != .closed else { return }
        preState = .closed
        continuation.yield(.state(.closed))
        continuation.yield(.closed(reason))
        continuation.finish()
    }

    /// Stops this client's networking without leaving: no `leave_room`, nothing purged,
    /// the stored session and its state stay, so that another ``ChatClient`` on the same
    /// store can ``resume(sessionID:)`` it (the peer sees this device disconnect, not leave).
    /// Ends the events with ``ChatCloseReason/suspended``. Idempotent.
    public func suspend() async {
        guard machine != nil else {
            closeIdle(.suspended)
            return
        }
        await perform(step { $0.suspend() })
    }
}
