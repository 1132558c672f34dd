import Foundation
import InvisoWire
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value in a JSON output line.
enum JSONValue: Sendable {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case null

    /// The value as JSON text (RFC 8259): strings escaped as RFC 8259 requires (``quoted(_:)``),
    /// whole doubles written as integers, the others in Swift's shortest round-trip form;
    /// not-finite doubles are `null`.
    ///
    /// Written out rather than through `JSONSerialization`: on Linux its first use in a
    /// process costs a few hundred microseconds of runtime type lookups, and the chat
    /// commands print their first line on the way to the first message (`docs/cli.md`).
    var json: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .int(let value): return String(value)
        case .string(let value): return Self.quoted(value)
        case .double(let value):
            guard value.isFinite else { return "null" }
            // Whole numbers below 2^53 are exact as integers (`-0.0` too: `0`).
            if value == value.rounded(), abs(value) < 9_007_199_254_740_992 { return String(Int64(value)) }
            return String(value)
        }
    }

    /// `text` as a JSON string, escaped by InvisoWire's serializer (`"`, `\\` and control
    /// characters; `/` and non-ASCII as they are).
    static func quoted(_ text: String) -> String {
        InvisoWire.JSONValue.string(text).jsonText
    }
}

/// Writes lines (JSON objects, one per line) to standard output: keys keep the order given,
/// each line is written whole and flushed immediately, and lines from different threads
/// never interleave.
enum JSONLines {
    private static let lock = Mutex<Void>(())

    /// Formats an object whose keys appear in the order given.
    static func object(_ fields: KeyValuePairs<String, JSONValue>) -> String {
        "{" + fields.map { JSONValue.string($0.key).json + ":" + $0.value.json }.joined(separator: ",") + "}"
    }

    /// Writes one object as a line on standard output.
    static func emit(_ fields: KeyValuePairs<String, JSONValue>) {
        emitLine(object(fields))
    }

    /// Writes `line` plus a newline to standard output with unbuffered `write(2)` calls.
    static func emitLine(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        lock.withLock { _ in
            bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let written = write(STDOUT_FILENO, raw.baseAddress! + offset, raw.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        return  // stdout is gone (e.g. closed pipe); nothing sensible left to do
                    }
                    offset += written
                }
            }
        }
    }

    /// Emits `{"event":"error","error":…}`.
    static func emitError(_ error: any Error) {
        emit(["event": .string("error"), "error": .string(describe(error))])
    }

    /// A one-line, secret-free description of `error`.
    static func describe(_ error: any Error) -> String {
        String(describing: error)
    }
}
