import Foundation
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

    /// The value as JSON text. Strings and numbers are escaped/formatted by
    /// `JSONSerialization` (wrapped in an array, then unwrapped, so no fragment support is needed).
    var json: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .int(let value): return String(value)
        case .string(let value): return Self.serialize(value)
        case .double(let value):
            guard value.isFinite else { return "null" }
            return Self.serialize(value)
        }
    }

    private static func serialize(_ value: Any) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: [value], options: [.withoutEscapingSlashes]) else {
            return "null"
        }
        let text = String(decoding: data, as: UTF8.self)
        // "[…]" → "…"
        return String(text.dropFirst().dropLast())
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
