import Foundation
import NIOCore
import NIOPosix

/// A keep-alive HTTP/1.1 client for the benchmark's REST calls: one request at a time on
/// one connection, `Content-Length` bodies only (what our server sends).
final class BenchHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private var cumulation = ByteBuffer()
    private var pending: EventLoopPromise<(Int, String)>?

    func request(_ promise: EventLoopPromise<(Int, String)>) {
        pending = promise
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        cumulation.writeBuffer(&incoming)
        let view = cumulation.readableBytesView
        guard let headerEnd = view.firstRange(of: [13, 10, 13, 10]) else { return }
        let head = String(decoding: view[view.startIndex..<headerEnd.lowerBound], as: UTF8.self)
        var length = 0
        for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
            length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
        }
        let bodyStart = headerEnd.upperBound
        guard view.endIndex - bodyStart >= length else { return }
        let body = String(decoding: view[bodyStart..<bodyStart + length], as: UTF8.self)
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        cumulation.moveReaderIndex(forwardBy: bodyStart + length - view.startIndex)
        cumulation.discardReadBytes()
        let promise = pending
        pending = nil
        promise?.succeed((status, body))
    }

    func channelInactive(context: ChannelHandlerContext) {
        pending?.fail(ChannelError.ioOnClosedChannel)
        pending = nil
    }
}

struct BenchHTTPClient: Sendable {
    let channel: any Channel
    let handler: NIOLoopBound<BenchHTTPHandler>
    let host: String

    static func connect(group: any EventLoopGroup, host: String, port: Int) async throws -> BenchHTTPClient {
        let channel = try await ClientBootstrap(group: group.next())
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(BenchHTTPHandler()) }
            }
            .connect(host: host, port: port).get()
        let handler = try await channel.pipeline.handler(type: BenchHTTPHandler.self).map {
            NIOLoopBound($0, eventLoop: channel.eventLoop)
        }.get()
        return BenchHTTPClient(channel: channel, handler: handler, host: host)
    }

    /// `POST path` with a JSON body; returns the status and body.
    func post(_ path: String, _ body: String) async throws -> (Int, String) {
        let loop = channel.eventLoop
        let promise = loop.makePromise(of: (Int, String).self)
        let request =
            "POST \(path) HTTP/1.1\r\nHost: \(host)\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        loop.execute {
            handler.value.request(promise)
            channel.writeAndFlush(ByteBuffer(string: request), promise: nil)
        }
        return try await promise.futureResult.get()
    }
}
