import Synchronization

/// Opens the connections a ``SignalingClient`` talks over.
///
/// The client's decisions (greeting, pings, pong deadline, fragments, close echo, backoff)
/// are its ``SignalingMachine``'s; a connector only moves frames. The default,
/// ``WebSocketSignalingConnector``, opens a WebSocket to the server over SwiftNIO (TCP,
/// TLS, HTTP/1.1 upgrade). InvisoTesting's `InProcessServer` is another: the server's
/// rooms in memory, so drivers can be tested with no socket and a manual clock.
public protocol SignalingConnector: Sendable {
    /// Opens one connection.
    ///
    /// `attempt` is abandoned when the client stops waiting (its connect timeout, `close()`):
    /// an implementation that may hang registers a way to fail with
    /// ``SignalingConnectAttempt/whenAbandoned(_:)``.
    ///
    /// - Throws: Any error when the connection could not be opened.
    func connect(_ attempt: SignalingConnectAttempt) async throws -> any SignalingConnection
}

/// One open signaling connection: WebSocket frames in and out.
public protocol SignalingConnection: Sendable {
    /// Serves the connection: calls `opened` once frames can be written (and stops at once
    /// when it returns `false`), then `received` for every frame in order, and returns when
    /// the connection ended; it is closed then.
    func serve(
        opened: @Sendable () async -> Bool,
        received: @Sendable (SignalingMachine.Frame) async -> Void
    ) async

    /// Writes one frame (masked on the wire where the protocol requires it).
    ///
    /// - Throws: Any error when the connection is closed or broken.
    func write(_ frame: SignalingMachine.Frame) async throws

    /// Writes frames in order as one write where the connection can (one flush). The
    /// default writes them one by one.
    ///
    /// - Throws: Any error when the connection is closed or broken (some frames may have
    ///   been written).
    func write(contentsOf frames: [SignalingMachine.Frame]) async throws

    /// The 8-byte payload of the latest pong seen as it arrived, or 0. A pong that arrived
    /// in time counts even when the task reading frames was starved by a busy CPU: the
    /// client checks here before it declares a pong timeout.
    var latestPong: UInt64 { get }

    /// Closes the connection (a no-op when already closed); ``serve(opened:received:)``
    /// returns soon after.
    func close()
}

extension SignalingConnection {
    /// Writes the frames one by one.
    public func write(contentsOf frames: [SignalingMachine.Frame]) async throws {
        for frame in frames { try await write(frame) }
    }
}

/// A connection being opened, which the client may abandon (connect timeout, close).
public final class SignalingConnectAttempt: Sendable {
    private let state = Mutex<(actions: [@Sendable () -> Void], abandoned: Bool)>(([], false))

    /// A new attempt.
    public init() {}

    /// Whether the client gave up on this attempt.
    public var isAbandoned: Bool { state.withLock { $0.abandoned } }

    /// Runs `action` when the attempt is abandoned: at once when it already was.
    public func whenAbandoned(_ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { state in
            if !state.abandoned { state.actions.append(action) }
            return state.abandoned
        }
        if now { action() }
    }

    /// Gives up on the connection: the registered actions run once.
    public func abandon() {
        let actions = state.withLock { state in
            defer { state.actions = [] }
            state.abandoned = true
            return state.actions
        }
        for action in actions { action() }
    }
}
