import InvisoCrypto
import Logging
import NIOCore

/// A configured direct connection before (and while) it authenticates.
struct DirectChannelSetup: Sendable {
    let channel: any Channel
    /// Succeeds when the handshake completed; fails with a ``DirectError``.
    let established: EventLoopFuture<Void>
    let delivery: NIOLoopBound<DirectDeliveryHandler>
}

/// Builds the pipeline of a direct connection:
/// `frame decoder → handshake/frame protection → selection and delivery`.
enum DirectPipeline {
    /// Adds the handlers; call on the channel's event loop (channel initialisers).
    static func configure(
        _ channel: any Channel, side: DirectHandshake.Side, key: SecretBytes, role: V2Pairing.Role,
        configuration: DirectConfiguration, logger: Logger
    ) throws -> DirectChannelSetup {
        var generator = SystemRandomNumberGenerator()
        let nonce = (0..<DirectWire.nonceBytes).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let handshake = DirectHandshake(key: key, role: role, side: side, nonce: nonce)
        let established = channel.eventLoop.makePromise(of: Void.self)
        let delivery = DirectDeliveryHandler(role: role, highWaterBytes: configuration.receiveBufferBytes, logger: logger)
        let secure = DirectSecureHandler(
            handshake: handshake, timeout: configuration.handshakeTimeout.timeAmount, established: established,
            logger: logger)
        let decoder = ByteToMessageHandler(DirectFrameDecoder(side: side, maxBodyBytes: configuration.maxBodyBytes))
        let operations = channel.pipeline.syncOperations
        do {
            try operations.addHandler(decoder)
            try operations.addHandler(secure)
            try operations.addHandler(delivery)
        } catch {
            established.fail(DirectError.connectionClosed)
            throw error
        }
        return DirectChannelSetup(
            channel: channel, established: established.futureResult,
            delivery: NIOLoopBound(delivery, eventLoop: channel.eventLoop))
    }
}
