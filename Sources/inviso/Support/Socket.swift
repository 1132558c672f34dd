#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A connected TCP socket with blocking, EINTR-safe, partial-transfer-safe I/O and
/// Noise framing (each message preceded by its 2-byte big-endian length, rev 34 §13).
struct TCPConnection: Sendable {
    /// The largest message a 2-byte length prefix can describe.
    static let maximumFrameLength = 65_535

    /// The socket descriptor.
    let fd: Int32

    /// The peer closed (or reset) the connection while we were writing.
    struct PeerClosed: Error, CustomStringConvertible {
        var description: String { "connection closed by peer" }
    }

    /// Sends one message with its length prefix.
    /// - Throws: ``CLIError`` for a message over 65,535 bytes or a socket error,
    ///   ``PeerClosed`` when the peer has gone away.
    func writeFrame(_ message: [UInt8]) throws {
        guard message.count <= Self.maximumFrameLength else {
            throw CLIError("message of \(message.count) bytes exceeds the 65535-byte frame limit")
        }
        var frame = [UInt8]()
        frame.reserveCapacity(message.count + 2)
        frame.append(UInt8(truncatingIfNeeded: message.count >> 8))
        frame.append(UInt8(truncatingIfNeeded: message.count))
        frame.append(contentsOf: message)
        try writeAll(frame)
    }

    /// Reads one length-prefixed message; `nil` when the peer closed cleanly between messages.
    /// - Throws: ``CLIError`` when the connection ends inside a message or fails.
    func readFrame() throws -> [UInt8]? {
        guard let header = try readExactly(2) else { return nil }
        let length = Int(header[0]) << 8 | Int(header[1])
        if length == 0 { return [] }
        guard let body = try readExactly(length) else {
            throw CLIError("connection closed in the middle of a message")
        }
        return body
    }

    /// Reads exactly `count` bytes; `nil` if the stream ended before the first byte.
    func readExactly(_ count: Int) throws -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = buffer.withUnsafeMutableBytes { raw in
                recv(fd, raw.baseAddress! + filled, count - filled, 0)
            }
            if got > 0 {
                filled += got
            } else if got == 0 {
                if filled == 0 { return nil }
                throw CLIError("connection closed in the middle of a message")
            } else {
                let code = errno
                if code == EINTR { continue }
                throw CLIError("receive failed: \(systemMessage(code))")
            }
        }
        return buffer
    }

    /// Writes all of `bytes`, resuming after partial writes and interruptions.
    func writeAll(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let sent = send(fd, raw.baseAddress! + offset, raw.count - offset, sendFlags)
                if sent >= 0 {
                    offset += sent
                    continue
                }
                let code = errno
                if code == EINTR { continue }
                if code == EPIPE || code == ECONNRESET { throw PeerClosed() }
                throw CLIError("send failed: \(systemMessage(code))")
            }
        }
    }

    /// Ends our sending direction; the peer reads end-of-stream after the data already sent.
    func shutdownWrite() { _ = shutdown(fd, Int32(SHUT_WR)) }

    /// Ends our receiving direction, waking a thread blocked in `recv`.
    func shutdownRead() { _ = shutdown(fd, Int32(SHUT_RD)) }

    /// Ends both directions.
    func shutdownBoth() { _ = shutdown(fd, Int32(SHUT_RDWR)) }

    /// Closes the descriptor.
    func close() { closeDescriptor(fd) }
}

/// A listening TCP socket.
struct TCPListener {
    let fd: Int32
    /// The numeric address actually bound.
    let host: String
    /// The port actually bound (the kernel's choice when 0 was asked for).
    let port: Int

    /// Binds and listens on `host:port` (port 0: an ephemeral port).
    init(host: String, port: Int) throws {
        guard (0...65_535).contains(port) else { throw CLIError("port must be between 0 and 65535") }
        var lastError = "no usable address"
        for address in try resolve(host: host, port: port, passive: true) {
            let fd = socket(address.family, socketStreamType, 0)
            guard fd >= 0 else { lastError = "socket: \(systemMessage(errno))"; continue }
            var one: Int32 = 1
            _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            let bound = address.storage.withUnsafeBytes { raw in
                bind(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), address.length)
            }
            guard bound == 0 else { lastError = "bind: \(systemMessage(errno))"; closeDescriptor(fd); continue }
            guard listen(fd, 16) == 0 else { lastError = "listen: \(systemMessage(errno))"; closeDescriptor(fd); continue }
            guard let local = localAddress(of: fd) else {
                lastError = "getsockname: \(systemMessage(errno))"
                closeDescriptor(fd)
                continue
            }
            self.fd = fd
            self.host = local.host
            self.port = local.port
            return
        }
        throw CLIError("cannot listen on \(host):\(port): \(lastError)")
    }

    /// Waits for the next connection.
    func accept() throws -> TCPConnection {
        while true {
            let client = acceptConnection(fd)
            if client >= 0 {
                setNoDelay(client)
                return TCPConnection(fd: client)
            }
            let code = errno
            if code == EINTR || code == ECONNABORTED { continue }
            throw CLIError("accept failed: \(systemMessage(code))")
        }
    }

    func close() { closeDescriptor(fd) }
}

/// Connects to `host:port`, trying each resolved address in turn.
func connectTCP(host: String, port: Int) throws -> TCPConnection {
    guard (1...65_535).contains(port) else { throw CLIError("port must be between 1 and 65535") }
    var lastError = "no usable address"
    for address in try resolve(host: host, port: port, passive: false) {
        let fd = socket(address.family, socketStreamType, 0)
        guard fd >= 0 else { lastError = "socket: \(systemMessage(errno))"; continue }
        let result = address.storage.withUnsafeBytes { raw in
            connect(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), address.length)
        }
        if result == 0 || (errno == EINTR && waitForConnect(fd)) {
            setNoDelay(fd)
            return TCPConnection(fd: fd)
        }
        lastError = systemMessage(errno)
        closeDescriptor(fd)
    }
    throw CLIError("cannot connect to \(host):\(port): \(lastError)")
}

/// Splits `HOST:PORT` or `[IPV6]:PORT`.
func parseHostPort(_ text: String) throws -> (host: String, port: Int) {
    let host: Substring
    let portText: Substring
    if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
        host = text[text.index(after: text.startIndex)..<close]
        let rest = text[text.index(after: close)...]
        guard rest.hasPrefix(":") else { throw CLIError("expected HOST:PORT, got \(text)") }
        portText = rest.dropFirst()
    } else if let colon = text.lastIndex(of: ":") {
        host = text[..<colon]
        portText = text[text.index(after: colon)...]
    } else {
        throw CLIError("expected HOST:PORT, got \(text)")
    }
    guard !host.isEmpty, let port = Int(portText), (1...65_535).contains(port) else {
        throw CLIError("expected HOST:PORT with a port between 1 and 65535, got \(text)")
    }
    return (String(host), port)
}

/// Ignores SIGPIPE so that writing to a closed socket or pipe reports EPIPE instead of killing us.
func ignoreBrokenPipes() {
    _ = signal(SIGPIPE, SIG_IGN)
}

// MARK: - Helpers

#if canImport(Glibc)
private let socketStreamType = Int32(SOCK_STREAM.rawValue)
private let sendFlags = Int32(MSG_NOSIGNAL)
#else
private let socketStreamType = SOCK_STREAM
private let sendFlags: Int32 = 0
#endif

private struct ResolvedAddress {
    var family: Int32
    var storage: [UInt8]
    var length: socklen_t
}

private func resolve(host: String, port: Int, passive: Bool) throws -> [ResolvedAddress] {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = socketStreamType
    hints.ai_flags = passive ? AI_PASSIVE : 0
    var list: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(host, String(port), &hints, &list)
    guard status == 0 else {
        throw CLIError("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
    }
    defer { freeaddrinfo(list) }
    var addresses: [ResolvedAddress] = []
    var cursor = list
    while let entry = cursor {
        if let sockaddrPointer = entry.pointee.ai_addr {
            let length = Int(entry.pointee.ai_addrlen)
            let bytes = [UInt8](UnsafeRawBufferPointer(start: sockaddrPointer, count: length))
            addresses.append(ResolvedAddress(family: entry.pointee.ai_family, storage: bytes, length: entry.pointee.ai_addrlen))
        }
        cursor = entry.pointee.ai_next
    }
    return addresses
}

private func localAddress(of fd: Int32) -> (host: String, port: Int)? {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let ok = withUnsafeMutablePointer(to: &storage) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard ok == 0 else { return nil }
    var hostBuffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
    var portBuffer = [CChar](repeating: 0, count: Int(NI_MAXSERV))
    let status = withUnsafePointer(to: &storage) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            getnameinfo($0, length, &hostBuffer, socklen_t(hostBuffer.count), &portBuffer, socklen_t(portBuffer.count),
                        NI_NUMERICHOST | NI_NUMERICSERV)
        }
    }
    guard status == 0 else { return nil }
    let host = String(decoding: hostBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let port = Int(String(decoding: portBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) ?? 0
    return (host, port)
}

/// After `connect` was interrupted, waits for the handshake to finish and reports success.
private func waitForConnect(_ fd: Int32) -> Bool {
    var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
    while true {
        let ready = poll(&entry, 1, -1)
        if ready < 0 && errno == EINTR { continue }
        guard ready > 0 else { return false }
        var failure: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &length) == 0 else { return false }
        if failure != 0 { errno = failure; return false }
        return true
    }
}

private func setNoDelay(_ fd: Int32) {
    var one: Int32 = 1
    _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
}

private func closeDescriptor(_ fd: Int32) {
    #if canImport(Glibc)
    _ = Glibc.close(fd)
    #else
    _ = Darwin.close(fd)
    #endif
}

func systemMessage(_ code: Int32) -> String {
    String(cString: strerror(code))
}

private func acceptConnection(_ fd: Int32) -> Int32 {
    #if canImport(Glibc)
    Glibc.accept(fd, nil, nil)
    #else
    Darwin.accept(fd, nil, nil)
    #endif
}
