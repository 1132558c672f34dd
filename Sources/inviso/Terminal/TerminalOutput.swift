import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the terminal helpers (``Spinner``, the status line) write: injectable so tests can
/// record the output and choose whether it is a terminal.
protocol TerminalOutput: Sendable {
    /// Whether the output is an interactive terminal (redrawing a line makes sense).
    var isTerminal: Bool { get }
    /// Writes `text` as is (no newline added), unbuffered.
    func write(_ text: String)
}

/// Standard output or standard error of this process.
struct StandardStreamOutput: TerminalOutput {
    /// The file descriptor written to.
    let descriptor: Int32

    /// Standard output.
    static let standardOutput = StandardStreamOutput(descriptor: STDOUT_FILENO)
    /// Standard error.
    static let standardError = StandardStreamOutput(descriptor: STDERR_FILENO)

    var isTerminal: Bool { isatty(descriptor) == 1 }

    func write(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        bytes.withUnsafeMutableBytes { raw in
            while offset < raw.count {
                #if canImport(Glibc)
                let written = Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                #else
                let written = Darwin.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                #endif
                if written < 0 {
                    if errno == EINTR { continue }
                    return  // the stream is gone; nothing sensible left to do
                }
                offset += written
            }
        }
    }
}
