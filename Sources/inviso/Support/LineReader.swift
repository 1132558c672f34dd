#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads raw lines from a file descriptor (standard input by default) without decoding them.
///
/// A line ends at `\n`; a `\r` right before it is dropped too. A final line without a
/// newline is still returned. Bytes are passed through untouched (no UTF-8 repair).
struct LineReader {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false

    init(fd: Int32 = STDIN_FILENO) {
        self.fd = fd
    }

    /// The next line without its terminator, or `nil` at end of input.
    mutating func next() throws -> [UInt8]? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                var end = newline
                if end > start && buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                let line = Array(buffer[start..<end])
                start = newline + 1
                return line
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                let line = Array(buffer[start...])
                start = buffer.count
                return line
            }
            try fill()
        }
    }

    private mutating func fill() throws {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let got = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if got > 0 {
                buffer.append(contentsOf: chunk[0..<got])
                return
            }
            if got == 0 {
                atEnd = true
                return
            }
            let code = errno
            if code == EINTR { continue }
            throw CLIError("reading standard input failed: \(systemMessage(code))")
        }
    }
}
