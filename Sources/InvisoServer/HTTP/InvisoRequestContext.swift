public import Hummingbird
public import NIOCore

/// The request context: Hummingbird's core storage plus the client's address (for the
/// per-address limits on `accept` and `check`).
public struct InvisoRequestContext: RequestContext {
    /// Hummingbird's per-request storage.
    public var coreContext: CoreRequestContextStorage
    /// The peer's socket address.
    public let remoteAddress: SocketAddress?

    /// Creates the context for a request on `source.channel`.
    public init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
