import InvisoCrypto
import Foundation
import InvisoNoise
import Synchronization

/// Runs one Noise session over a framed TCP connection and reports it as JSON lines.
enum NoiseSession {
    /// Performs the handshake with empty payloads (any received payload is accepted and
    /// ignored), then prints the `handshake` event.
    static func handshake(_ state: HandshakeState, over connection: TCPConnection) throws -> NoiseTransport {
        var state = state
        while !state.isComplete {
            if state.isWriteTurn {
                let message = try state.writeMessage([])
                do {
                    try connection.writeFrame(message)
                } catch is TCPConnection.PeerClosed {
                    throw CLIError("connection closed during the handshake")
                }
            } else {
                guard let message = try connection.readFrame() else {
                    throw CLIError("connection closed during the handshake")
                }
                _ = try state.readMessage(message)
            }
        }
        let transport = try state.transport()
        JSONLines.emit([
            "event": .string("handshake"),
            "handshake_hash": .string(Hex.encode(transport.handshakeHash)),
            "remote_static": transport.remoteStaticPublicKey.map { .string(Hex.encode($0)) } ?? .null,
        ])
        return transport
    }

    /// Prints a `received` event for one decrypted transport message.
    static func report(_ plaintext: [UInt8]) {
        JSONLines.emit([
            "event": .string("received"),
            "text": .string(String(decoding: plaintext, as: UTF8.self)),
            "hex": .string(Hex.encode(plaintext)),
        ])
    }

    /// The responder's transport phase: reports every message and, with `echo`, sends it
    /// back (only when this side may send). Ends when the peer closes the connection.
    static func serve(_ transport: NoiseTransport, over connection: TCPConnection, echo: Bool) throws {
        var transport = transport
        let canEcho = echo && transport.sender != nil
        while let message = try connection.readFrame() {
            let plaintext = try transport.decrypt(message)
            report(plaintext)
            if canEcho {
                do {
                    try connection.writeFrame(try transport.encrypt(plaintext))
                } catch is TCPConnection.PeerClosed {
                    return
                }
            }
        }
    }

    /// The initiator's transport phase: sends each line of standard input as one message.
    ///
    /// In a one-way pattern it only sends and closes at end of input. Otherwise a second
    /// thread sends while this one reports whatever comes back; at end of input the
    /// sending direction is shut down and the session ends once every sent message has
    /// come back, or as soon as the peer closes (a peer that does not echo closes after
    /// reading our end of stream).
    static func drive(_ transport: NoiseTransport, over connection: TCPConnection) throws {
        guard transport.receiver != nil else {
            var sender = transport
            var lines = LineReader()
            while let line = try lines.next() {
                do {
                    try connection.writeFrame(try sender.encrypt(line))
                } catch is TCPConnection.PeerClosed {
                    return
                }
            }
            connection.shutdownWrite()
            return
        }

        let progress = Progress()
        let writer = Thread {
            var sender = transport
            var lines = LineReader()
            do {
                while let line = try lines.next() {
                    let message = try sender.encrypt(line)
                    progress.state.withLock { $0.sent += 1 }
                    try connection.writeFrame(message)
                }
            } catch is TCPConnection.PeerClosed {
                // The peer went away; the reader sees the close and ends the session.
            } catch {
                progress.state.withLock { $0.failure = JSONLines.describe(error) }
                connection.shutdownBoth()
                return
            }
            connection.shutdownWrite()
            let finished = progress.state.withLock { state in
                state.inputDone = true
                return state.received >= state.sent
            }
            if finished { connection.shutdownRead() }
        }
        writer.start()

        var receiver = transport
        do {
            while let message = try connection.readFrame() {
                let plaintext = try receiver.decrypt(message)
                report(plaintext)
                let finished = progress.state.withLock { state in
                    state.received += 1
                    return state.inputDone && state.received >= state.sent
                }
                if finished { break }
            }
        } catch {
            // A failure caused by our own sender thread is the one worth reporting.
            if let failure = progress.state.withLock({ $0.failure }) { throw CLIError(failure) }
            throw error
        }
        if let failure = progress.state.withLock({ $0.failure }) { throw CLIError(failure) }
    }

    /// Counters shared by the initiator's sending and receiving threads.
    private final class Progress: Sendable {
        struct State {
            var sent = 0
            var received = 0
            var inputDone = false
            var failure: String?
        }

        let state = Mutex(State())
    }
}
