import InvisoCrypto
import InvisoWire
import Logging
import NIOCore
import NIOPosix
import Testing

@testable import InvisoKit

struct DirectTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum DirectTestSupport {
    static let key = SecretBytes((0..<32).map { UInt8($0 &+ 100) })
    static let wrongKey = SecretBytes((0..<32).map { UInt8($0 &+ 1) })
    static let quiet = Logger(label: "inviso.tests.direct", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Loopback, generous timeouts: a healthy run finishes in milliseconds, a loaded CI host
    /// still never times out.
    static func configuration(_ change: (inout DirectConfiguration) -> Void = { _ in }) -> DirectConfiguration {
        var configuration = DirectConfiguration()
        configuration.host = "127.0.0.1"
        configuration.handshakeTimeout = .seconds(20)
        configuration.dialTimeout = .seconds(20)
        configuration.connectTimeout = .seconds(30)
        change(&configuration)
        return configuration
    }

    static func listener(
        _ role: V2Pairing.Role, key: SecretBytes = key, configuration: DirectConfiguration = configuration()
    ) async throws -> DirectListener {
        try await DirectListener.bind(key: key, role: role, configuration: configuration, logger: quiet)
    }

    /// Runs both connectors at once; each dials the other's candidates unless told not to.
    static func connect(
        _ creator: DirectListener, _ joiner: DirectListener, creatorDials: Bool = true, joinerDials: Bool = true
    ) async throws -> (creator: DirectConnection, joiner: DirectConnection) {
        let creatorTargets = creatorDials ? joiner.candidates() : []
        let joinerTargets = joinerDials ? creator.candidates() : []
        async let c = DirectConnector(listener: creator).connect(to: creatorTargets)
        async let j = DirectConnector(listener: joiner).connect(to: joinerTargets)
        return try await (c, j)
    }

    /// Runs `body`, failing when it takes longer than `seconds` (60 by default: a healthy
    /// run takes milliseconds, a CI host running every suite at once in a debug build can
    /// take tens of seconds for a thousand frames).
    static func within<T: Sendable>(
        _ seconds: Int = 300, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw DirectTestFailure("timed out after \(seconds) s")
            }
            return value
        }
    }

    /// The next `count` frames (fails when the stream ends first or time runs out).
    static func take(_ count: Int, from connection: DirectConnection) async throws -> [[UInt8]] {
        try await within {
            var frames: [[UInt8]] = []
            for await frame in connection.incoming {
                frames.append(frame)
                if frames.count == count { break }
            }
            guard frames.count == count else { throw DirectTestFailure("stream ended after \(frames.count) frames") }
            return frames
        }
    }

    /// Waits until the stream finishes; returns how many frames came before.
    static func drainToEnd(_ connection: DirectConnection) async throws -> Int {
        try await within {
            var count = 0
            for await _ in connection.incoming { count += 1 }
            return count
        }
    }

    /// A plain TCP client (no direct protocol) to `port` on loopback.
    static func rawClient(port: Int) async throws -> any Channel {
        try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .connect(host: "127.0.0.1", port: port).get()
    }

    /// A port nothing listens on (bound, then closed).
    static func closedPort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(channel.localAddress?.port)
        try await channel.close()
        return port
    }
}
