import Dispatch
import Foundation
import InvisoKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Everything the chat loop reacts to, from every source, in one stream.
enum ChatInput: Sendable {
    /// An event of the engine.
    case event(ChatEvent)
    /// The engine's event stream finished.
    case eventsEnded
    /// A whole line of standard input (script and plain modes).
    case line([UInt8])
    /// Bytes typed on the terminal (interactive mode, raw).
    case keys([UInt8])
    /// Standard input ended.
    case inputEnded
    /// The terminal changed size.
    case resized
    /// SIGINT or SIGTERM.
    case interrupted
    /// A periodic check while waiting to leave.
    case tick
}

/// Reads standard input on its own thread (a blocking `read(2)` must not hold one of the
/// concurrency pool's few threads) and feeds the chat loop.
enum StandardInputReader {
    /// Whole lines, then ``ChatInput/inputEnded``.
    static func lines(into continuation: AsyncStream<ChatInput>.Continuation) {
        let thread = Thread {
            var reader = LineReader()
            while true {
                guard let line = try? reader.next() else { break }
                continuation.yield(.line(line))
            }
            continuation.yield(.inputEnded)
        }
        thread.start()
    }

    /// Raw bytes as they are typed, then ``ChatInput/inputEnded``.
    static func keys(into continuation: AsyncStream<ChatInput>.Continuation) {
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 1_024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress!, $0.count) }
                if count > 0 {
                    continuation.yield(.keys(Array(buffer[0..<count])))
                } else if count == 0 || errno != EINTR {
                    break
                }
            }
            continuation.yield(.inputEnded)
        }
        thread.start()
    }
}

/// Turns signals into inputs: SIGWINCH → ``ChatInput/resized``, SIGINT and SIGTERM →
/// ``ChatInput/interrupted`` (the loop leaves the room before exiting).
final class SignalInputs {
    private let sources: [any DispatchSourceSignal]

    init(into continuation: AsyncStream<ChatInput>.Continuation) {
        var sources: [any DispatchSourceSignal] = []
        for (number, input) in [(SIGWINCH, ChatInput.resized), (SIGINT, .interrupted), (SIGTERM, .interrupted)] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(input) }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}
