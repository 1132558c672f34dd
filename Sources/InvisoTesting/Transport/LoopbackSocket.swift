#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP socket bound to a free port of 127.0.0.1, held until ``close()`` (or deinit), so
/// no other test can take the port meanwhile: bound only, connections to it are refused;
/// listening, its port is "already in use" for a server that tries to bind it.
public final class LoopbackSocket: @unchecked Sendable {
    // @unchecked: the descriptor is written once, in init, and closed once.
    /// The port it holds.
    public let port: Int
    private var fd: Int32

    /// Why the socket could not be made.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Binds a socket to `127.0.0.1:0`, and listens on it if `listening`.
    public init(listening: Bool) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket() failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let descriptor = fd
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, !listening || listen(descriptor, 1) == 0 else {
            Self.close(descriptor)
            throw Failure(description: "bind() or listen() failed")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Lets the port go. Idempotent.
    public func close() {
        guard fd >= 0 else { return }
        Self.close(fd)
        fd = -1
    }

    private static func close(_ descriptor: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(descriptor)
        #else
        _ = Darwin.close(descriptor)
        #endif
    }

    deinit { close() }
}
