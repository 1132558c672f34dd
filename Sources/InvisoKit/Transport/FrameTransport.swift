/// Which data path a frame travels: through the server's binary relay, or over a direct
/// TCP connection between the two clients.
public enum ChatPath: String, Sendable, Hashable, CustomStringConvertible {
    /// Binary frames relayed by the signaling server (available as soon as both sides joined).
    case relay
    /// A direct TCP connection, authenticated with a key from the secure channel.
    case direct

    public var description: String { rawValue }
}

/// One path that carries opaque, already end-to-end encrypted frames to the peer.
///
/// A transport never sees plaintext and adds no confidentiality of its own: the secure
/// channel seals every frame before it reaches ``send(_:)``. Frames arrive on ``incoming``
/// whole and in the order this path delivered them; the stream finishes when the path
/// closes (by either side, or because the connection failed).
public protocol FrameTransport: AnyObject, Sendable {
    /// The kind of path.
    var path: ChatPath { get }
    /// Frames from the peer, in arrival order; finishes when the transport is closed.
    var incoming: AsyncStream<[UInt8]> { get }
    /// Sends one frame. Throws ``TransportError/notConnected`` when the path is down for
    /// now (the caller keeps the frame and sends it again later), ``TransportError/closed``
    /// after ``close()``, ``TransportError/frameTooLarge`` above the path's limit.
    func send(_ frame: [UInt8]) async throws(TransportError)
    /// Sends frames in order, as one write where the path can (one flush, one wait), and
    /// stops at the first failure. A path with its own implementation may report fewer
    /// frames sent than left (never more): the caller sends the rest again and the peer
    /// drops duplicates. The default sends them one by one with ``send(_:)``.
    ///
    /// - Returns: How many frames were sent, and the failure that stopped the rest.
    func send(contentsOf frames: [[UInt8]]) async -> FrameBatchResult
    /// Closes the path; ``incoming`` finishes. Idempotent.
    func close() async
}

/// What ``FrameTransport/send(contentsOf:)`` did: the first `sent` frames went out; when
/// `failure` is set, the rest did not.
public struct FrameBatchResult: Sendable, Hashable {
    /// How many frames, from the first, were sent.
    public var sent: Int
    /// Why the rest were not sent (`nil` when all were).
    public var failure: TransportError?

    /// A result.
    public init(sent: Int, failure: TransportError? = nil) {
        self.sent = sent
        self.failure = failure
    }
}

extension FrameTransport {
    /// Sends the frames one by one with ``send(_:)``.
    public func send(contentsOf frames: [[UInt8]]) async -> FrameBatchResult {
        for (index, frame) in frames.enumerated() {
            do throws(TransportError) {
                try await send(frame)
            } catch {
                return FrameBatchResult(sent: index, failure: error)
            }
        }
        return FrameBatchResult(sent: frames.count)
    }
}

/// Why a transport refused a frame. Carries no frame bytes.
public struct TransportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kinds of failure.
    public enum Code: String, Sendable, Hashable {
        case notConnected
        case closed
        case frameTooLarge
    }

    public let code: Code

    public init(_ code: Code) { self.code = code }

    /// The path is down for now; it may come back.
    public static let notConnected = TransportError(.notConnected)
    /// The transport was closed and will not come back.
    public static let closed = TransportError(.closed)
    /// The frame is larger than the path carries.
    public static let frameTooLarge = TransportError(.frameTooLarge)

    public var description: String {
        switch code {
        case .notConnected: "the path is not connected"
        case .closed: "the path is closed"
        case .frameTooLarge: "the frame is larger than the path allows"
        }
    }
}
