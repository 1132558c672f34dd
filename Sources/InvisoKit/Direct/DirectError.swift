/// Why a direct connection could not be set up, or why it was dropped.
///
/// Errors compare by kind. None carries key material, nonces, MACs, frame bytes or peer
/// addresses; authentication failures are deliberately coarse (never which check failed).
public struct DirectError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Code: Hashable, Sendable {
        case invalidKey
        case bindFailed
        case connectFailed
        case authenticationFailed
        case handshakeTimeout
        case protocolViolation
        case frameTooLarge
        case connectionClosed
        case timedOut
        case cancelled
    }

    package let code: Code

    package init(_ code: Code) { self.code = code }

    /// The path key is not 32 bytes, or is all zero.
    public static let invalidKey = DirectError(.invalidKey)
    /// The listening socket could not be bound.
    public static let bindFailed = DirectError(.bindFailed)
    /// A TCP connection could not be opened (refused, unreachable, timed out).
    public static let connectFailed = DirectError(.connectFailed)
    /// The peer does not hold the same path key, or answered for the wrong role.
    public static let authenticationFailed = DirectError(.authenticationFailed)
    /// The authentication handshake did not complete in time.
    public static let handshakeTimeout = DirectError(.handshakeTimeout)
    /// The peer sent bytes that do not follow the direct protocol (bad magic, wrong
    /// handshake length, unknown frame kind, a data frame before selection, …).
    public static let protocolViolation = DirectError(.protocolViolation)
    /// A frame's length prefix is above the limit; the connection is closed before
    /// anything of that size is buffered.
    public static let frameTooLarge = DirectError(.frameTooLarge)
    /// The connection closed (by either side) before the step completed.
    public static let connectionClosed = DirectError(.connectionClosed)
    /// No connection was authenticated and selected within the connector's timeout: stay on
    /// the relay.
    public static let timedOut = DirectError(.timedOut)
    /// The task that was connecting was cancelled.
    public static let cancelled = DirectError(.cancelled)

    /// What went wrong.
    public var description: String {
        switch code {
        case .invalidKey: "direct path key is invalid"
        case .bindFailed: "direct listener could not bind"
        case .connectFailed: "direct connection could not be opened"
        case .authenticationFailed: "direct connection authentication failed"
        case .handshakeTimeout: "direct handshake timed out"
        case .protocolViolation: "direct connection protocol violation"
        case .frameTooLarge: "direct frame too large"
        case .connectionClosed: "direct connection closed"
        case .timedOut: "no direct connection within the timeout"
        case .cancelled: "direct connection attempt cancelled"
        }
    }
}
