import ArgumentParser
import Foundation
import InvisoKit
import InvisoStore

/// The options `inviso invite`, `join` and `resume` share. Whether the session is kept and
/// its name are set by ``SessionNaming`` (invite and join only: a resumed session already
/// has both).
struct ChatOptions: ParsableArguments {
    @Option(help: "The Inviso server (default: INVISO_SERVER, then http://127.0.0.1:8080).")
    var server: String?

    @Option(help: "Data directory (default: the per-user Inviso data directory).")
    var data: String?

    /// Keep nothing of this session (``SessionNaming``).
    var ephemeral = false

    /// A name for the session (``SessionNaming``).
    var name: String?

    /// The name the peer sees for us (``SessionNaming``, `--as`).
    var displayName: String?

    @Flag(help: "Scripting mode: each standard-input line is a message, end of input leaves; JSON lines on standard output.")
    var json = false

    @Flag(name: .customLong("no-direct"), help: "Never try a direct connection; stay on the server's relay.")
    var noDirect = false

    @Option(help: "Seconds to wait, after end of input, for the peer to acknowledge what was sent.")
    var linger: Int = 30

    @Option(help: "Where received files go (default: ~/Downloads when it exists, else the current directory).")
    var downloads: String?

    @Option(name: .customLong("file-rate"), help: ArgumentHelp(
        "Send files at most this fast, in bytes per second (500K, 8M, 1G).", valueName: "rate"))
    var fileRate: ByteRate?

    /// The data directory.
    var directory: URL { DataDirectory.url(data) }

    /// The engine's configuration from these options and the environment.
    func configuration(environment: [String: String]) throws -> ChatClient.Configuration {
        var configuration = ChatClient.Configuration(server: try ServerAddress.resolve(flag: server, environment: environment))
        configuration.isEphemeral = ephemeral
        if let name { configuration.name = name }
        configuration.downloads = downloadsFolder(environment: environment)
        if noDirect { configuration.direct = nil }
        configuration.files.maxBytesPerSecond = fileRate?.bytesPerSecond
        return configuration
    }

    /// `--downloads`, else `~/Downloads` when it exists, else the current directory.
    func downloadsFolder(environment: [String: String]) -> URL {
        if let downloads { return URL(fileURLWithPath: downloads, isDirectory: true).standardizedFileURL }
        if let home = environment["HOME"] {
            let folder = URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent("Downloads", isDirectory: true)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue {
                return folder
            }
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
    }

    /// The store, created when missing (its key file with mode 0600, or from
    /// `INVISO_PASSPHRASE`); `nil` for an ephemeral session, which touches no disk.
    func openStore(environment: [String: String]) throws -> InvisoStore? {
        guard !ephemeral else { return nil }
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        do {
            return try InvisoStore(directory: directory, keySource: .fromEnvironment(environment))
        } catch {
            throw CLIError(SessionStoreOptions.explain(error, directory: directory, environment: environment))
        }
    }

    func validate() throws {
        guard (0...3_600).contains(linger) else { throw ValidationError("--linger must be 0 to 3600 seconds") }
        if let name, name.count > 200 { throw ValidationError("--name is limited to 200 characters") }
    }

    /// These options with `naming`'s choices.
    func named(_ naming: SessionNaming) -> ChatOptions {
        var options = self
        options.ephemeral = naming.ephemeral
        options.name = naming.name
        options.displayName = naming.displayName
        return options
    }
}

/// The options of a new session (`invite`, `join`): kept or not, and its name.
struct SessionNaming: ParsableArguments {
    @Flag(help: "Keep nothing of this session: no history, no keys on disk.")
    var ephemeral = false

    @Option(help: "A name for this session in `inviso sessions`.")
    var name: String?

    @Option(name: .customLong("as"), help: "The name your peer sees for you, sent inside the encrypted channel (v2).")
    var displayName: String?

    func validate() throws {
        if let name, name.count > 200 { throw ValidationError("--name is limited to 200 characters") }
        if let displayName, displayName.isEmpty || displayName.count > ChatPayload.maxProfileName {
            throw ValidationError("--as takes 1 to \(ChatPayload.maxProfileName) characters")
        }
    }
}

/// `--no-unicode` for commands that draw no QR code (`join`, `resume`): plain ASCII for
/// the spinner and the screen's marks.
struct TextStyleOptions: ParsableArguments {
    @Flag(name: .customLong("no-unicode"), help: "Draw with plain ASCII instead of Unicode (also when TERM=dumb).")
    var noUnicode = false

    /// The same choice as display options without a QR code's colours.
    var display: QRDisplayOptions {
        var display = QRDisplayOptions()
        display.noUnicode = noUnicode
        display.invert = false
        return display
    }
}
