import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole-file writes that never leave a half-written file behind.
enum AtomicFile {
    /// Writes `data` to a temporary file with owner-only permissions next to `url`, then
    /// renames it over `url` (rename(2) replaces the old file atomically).
    static func write(_ data: Data, to url: URL) throws {
        let directory = url.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600])
        else {
            throw CLIError("cannot write \(temporary.path)")
        }
        guard rename(temporary.path, url.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw CLIError("cannot replace \(url.path)")
        }
    }
}
