import InvisoCrypto
import InvisoWire
import Logging

// MARK: - The direct path's I/O (the attempt's decisions are the machine's)

extension ChatClient {
    /// Binds a direct listener with the path key; reports the candidates or the failure.
    func openDirectListener(key: SecretBytes, role: V2Pairing.Role) {
        guard let directConfiguration = configuration.direct else { return }
        let logger = logger
        let loop = executorLoop
        spawn { [weak self] in
            let listener: DirectListener
            do {
                // On the client's loop, like the signaling socket: a frame then goes from
                // the socket to the machine and back without a thread switch.
                listener = try await DirectListener.bind(
                    key: key, role: role, configuration: directConfiguration, group: loop, logger: logger)
            } catch {
                logger.debug("direct path: no listener; staying on the relay", metadata: ["reason": "\(error)"])
                await self?.feed(.directFailed)
                return
            }
            guard let self else {
                await listener.close()
                return
            }
            await self.listening(listener)
        }
    }

    private func listening(_ listener: DirectListener) async {
        guard state != .closed, machine?.directPhase == .binding else {
            await listener.close()
            return
        }
        directListener = listener
        await feed(.directListening(listener.candidates()))
    }

    /// Races for a connection to the peer; on success it becomes a path.
    func connectDirect(to candidates: [TransportCandidates.Candidate]) {
        guard let listener = directListener else {
            spawn { [weak self] in await self?.feed(.directFailed) }
            return
        }
        let connector = DirectConnector(listener: listener, clock: clock, logger: logger)
        let logger = logger
        spawn { [weak self] in
            let connection: DirectConnection
            do {
                connection = try await connector.connect(to: candidates)
            } catch {
                logger.debug("direct path: no connection; staying on the relay", metadata: ["reason": "\(error)"])
                await self?.feed(.directFailed)
                return
            }
            guard let self else {
                await connection.close()
                return
            }
            await self.connected(connection)
        }
    }

    private func connected(_ connection: DirectConnection) async {
        guard state != .closed, machine?.directPhase == .connecting else {
            await connection.close()
            return
        }
        directConnection = connection
        do {
            try await addPath(connection)
        } catch {
            await connection.close()
            return
        }
        logger.debug("direct path up")
    }
}
