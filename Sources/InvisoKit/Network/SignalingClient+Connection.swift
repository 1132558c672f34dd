import InvisoTime
import InvisoWire
import Logging

// MARK: - The machine's actions, and one connection

extension SignalingClient: TimerDriving {
    /// Carries out the machine's actions in order.
    func perform(_ actions: [SignalingMachine.Action]) async {
        for action in actions {
            switch action {
            case .connect(let id):
                startConnection(id)
            case .closeConnection:
                closeConnection()
            case .send(let message):
                // The machine's own messages go out even as it closes (`leave_room`).
                try? await connection?.write(.init(opcode: .text, payload: message.object.serialized()))
            case .sendPing(let payload):
                try? await connection?.write(.init(opcode: .ping, payload: payload))
            case .sendPong(let payload):
                try? await connection?.write(.init(opcode: .pong, payload: payload))
            case .sendClose(let code):
                try? await connection?.write(.init(opcode: .close, payload: [UInt8(code >> 8), UInt8(code & 0xFF)]))
            case .emit(let event):
                if case .disconnected(let reason) = event, reason != .closedByUser, reason != .gaveUp {
                    logger.info("signaling connection ended", metadata: ["reason": "\(reason)"])
                }
                continuation.yield(event)
            case .arm(let timer, let deadline):
                arm(timer, at: deadline)
            case .cancel(let timer):
                timers.cancel(timer)
            case .finish:
                jobs?.finish()
                jobs = nil
                for waiter in finishWaiters { waiter.resume() }
                finishWaiters.removeAll()
            }
        }
    }

    func spawn(_ job: @escaping @Sendable () async -> Void) {
        jobs?.yield(job)
    }

    func timerFired(_ timer: SignalingMachine.Timer, generation: UInt64) async {
        guard timers.fire(timer, generation: generation) else { return }
        if timer == .pong, let connection, let id = openConnection {
            // The connection saw the pong even if the reader has not got to it yet.
            let latest = connection.latestPong
            let payload = (0..<8).map { UInt8(truncatingIfNeeded: latest >> (56 - 8 * $0)) }
            await perform(machine.received(.init(opcode: .pong, payload: payload), on: id, at: clock.now))
        }
        await perform(machine.timerFired(timer, at: clock.now))
    }

    /// Closes the open connection, or abandons the one being opened.
    func closeConnection() {
        for attempt in pending.values { attempt.abandon() }
        pending.removeAll()
        connection?.close()
        connection = nil
        openConnection = nil
    }

    /// Opens connection `id` in a child task and serves it until it ends.
    private func startConnection(_ id: UInt64) {
        let attempt = SignalingConnectAttempt()
        pending[id] = attempt
        let connector = connector
        spawn { [weak self] in
            let connection: any SignalingConnection
            do {
                connection = try await connector.connect(attempt)
            } catch {
                await self?.connectionEnded(id)
                return
            }
            guard let self else {
                connection.close()
                return
            }
            await connection.serve(
                opened: { await self.opened(id, connection) },
                received: { frame in await self.received(frame, on: id) })
            // `serve` returns with the connection closed.
            await self.connectionEnded(id)
        }
    }

    /// The connection is up; `false` when it is no longer wanted (timed out, closed).
    private func opened(_ id: UInt64, _ connection: any SignalingConnection) async -> Bool {
        guard pending.removeValue(forKey: id) != nil, machine.connection == id, machine.phase == .connecting else {
            connection.close()
            return false
        }
        self.connection = connection
        openConnection = id
        await perform(machine.opened(id, at: clock.now))
        return true
    }

    private func received(_ frame: SignalingMachine.Frame, on id: UInt64) async {
        await perform(machine.received(frame, on: id, at: clock.now))
    }

    private func connectionEnded(_ id: UInt64) async {
        pending[id] = nil
        if openConnection == id {
            connection = nil
            openConnection = nil
        }
        await perform(machine.ended(id, at: clock.now))
    }
}
