/// Carries signaling events between server instances that share one database, so two
/// members of a room can be connected to different instances.
///
/// A bus delivers opaque messages (the hub encodes its own events). Delivery is
/// best-effort and at most once; messages from one publisher arrive at every other
/// instance in the order they were published. An instance never receives its own messages.
/// ``PostgresSignalingBus`` implements it with PostgreSQL `LISTEN`/`NOTIFY`; a single
/// instance needs no bus.
public protocol SignalingBus: Sendable {
    /// This instance's identifier (unique per process run).
    var instanceID: String { get }

    /// Sends `message` to every other instance.
    ///
    /// - Throws: when the bus is not running or the database refused the message; the
    ///   message was then not sent.
    func publish(_ message: [UInt8]) async throws

    /// The messages other instances published, in arrival order. Call once: the stream
    /// has a single consumer (the hub).
    func messages() -> AsyncStream<BusMessage>
}

/// A message received from another instance.
public struct BusMessage: Sendable, Equatable {
    /// The ``SignalingBus/instanceID`` of the instance that published it.
    public var origin: String
    /// The bytes it published.
    public var payload: [UInt8]

    /// Creates a message.
    public init(origin: String, payload: [UInt8]) {
        self.origin = origin
        self.payload = payload
    }
}
