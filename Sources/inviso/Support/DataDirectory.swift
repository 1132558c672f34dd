import Foundation

/// Where Inviso keeps per-user state when no `--data` directory is given.
enum DataDirectory {
    /// `$XDG_DATA_HOME/inviso`, else `~/.local/share/inviso` on Linux;
    /// `~/Library/Application Support/Inviso` on Apple platforms.
    static var defaultPath: String {
        #if canImport(Darwin)
        let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent("Library/Application Support")
        return base.appendingPathComponent("Inviso").path
        #else
        if let xdg = ProcessInfo.processInfo.environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg).appendingPathComponent("inviso").path
        }
        return URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(".local/share/inviso").path
        #endif
    }

    /// `--data` when given, else ``defaultPath``.
    static func url(_ data: String?) -> URL {
        URL(fileURLWithPath: data ?? defaultPath)
    }
}
