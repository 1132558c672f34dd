package import Foundation

/// Locates the shared test-vector folder (`shared/vectors`) for tests.
///
/// Looks at `INVISO_SHARED` first (the path of `shared/`), then at `../shared` beside the
/// package checkout. Under `CI=true` a missing folder is an error the tests must report as
/// a failure; elsewhere tests print a clear skip message.
package enum SharedVectors {
    /// Whether the environment says this is a CI run (`CI=true`).
    package static var isCI: Bool {
        ProcessInfo.processInfo.environment["CI"].map { $0.lowercased() == "true" || $0 == "1" } ?? false
    }

    /// The package root, derived from this file's location.
    package static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    /// The `shared/` folder, or `nil` if it cannot be found.
    package static var sharedDirectory: URL? {
        let fileManager = FileManager.default
        var candidates: [URL] = []
        if let configured = ProcessInfo.processInfo.environment["INVISO_SHARED"], !configured.isEmpty {
            candidates.append(URL(fileURLWithPath: configured))
        }
        candidates.append(packageRoot.deletingLastPathComponent().appendingPathComponent("shared"))
        return candidates.first { fileManager.fileExists(atPath: $0.appendingPathComponent("vectors").path) }
    }

    /// The URL of `vectors/<relativePath>` inside the shared folder, if present.
    package static func url(_ relativePath: String) -> URL? {
        guard let shared = sharedDirectory else { return nil }
        let url = shared.appendingPathComponent("vectors").appendingPathComponent(relativePath)
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }

    /// The message to print when vectors are absent outside CI.
    package static func skipMessage(_ what: String) -> String {
        "SKIPPED: \(what) — shared vectors not found; set INVISO_SHARED=/path/to/shared or place shared/ beside the checkout"
    }
}

extension Array where Element == UInt8 {
    /// Decodes lowercase or uppercase hex; returns `nil` for odd length or a non-hex digit.
    package init?(hex: String) {
        let utf8 = Array(hex.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = Self.nibble(utf8[index]), let low = Self.nibble(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        self = bytes
    }

    /// Lowercase hex of the bytes.
    package var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(count * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
