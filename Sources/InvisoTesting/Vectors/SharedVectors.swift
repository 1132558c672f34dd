package import Foundation
import InvisoCrypto
package import Testing

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

    /// Whether a test of `vectors/<relativePath>` should run: the file is there, or this is
    /// CI (where a missing file must fail the test, not skip it). Use it as
    /// `.enabled(if: SharedVectors.present("noise"), SharedVectors.skipComment)` so that a
    /// run without the vectors reports the test as skipped rather than passed.
    package static func present(_ relativePath: String) -> Bool {
        isCI || url(relativePath) != nil
    }

    /// Why a vector test was skipped.
    package static let skipComment: Comment = "shared vectors not found; set INVISO_SHARED=/path/to/shared or place shared/ beside the checkout"

    /// The message to print when vectors are absent outside CI.
    package static func skipMessage(_ what: String) -> String {
        "SKIPPED: \(what) — shared vectors not found; set INVISO_SHARED=/path/to/shared or place shared/ beside the checkout"
    }
}

extension Array where Element == UInt8 {
    /// Decodes hex of either case; returns `nil` for odd length or a non-hex digit.
    package init?(hex: String) {
        guard let bytes = Hex.decode(hex) else { return nil }
        self = bytes
    }

    /// Lowercase hex of the bytes.
    package var hex: String { Hex.encode(self) }
}
