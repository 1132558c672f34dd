import ArgumentParser
import Foundation
import InvisoKit
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The options `inviso send` and `inviso receive` share.
struct OneShotOptions: ParsableArguments {
    @Option(help: "The Inviso server (default: INVISO_SERVER, then http://127.0.0.1:8080).")
    var server: String?

    @Flag(help: "JSON lines on standard output (the chat's file events), for scripts.")
    var json = false

    @Flag(name: .customLong("no-direct"), help: "Never try a direct connection; stay on the server's relay.")
    var noDirect = false

    /// A session that keeps nothing on disk, for `server`.
    func configuration(environment: [String: String]) throws -> ChatClient.Configuration {
        var configuration = ChatClient.Configuration(server: try ServerAddress.resolve(flag: server, environment: environment))
        configuration.isEphemeral = true
        if noDirect { configuration.direct = nil }
        return configuration
    }
}

/// `inviso send PATH`: one file (or a folder, as a tar archive) to whoever joins the invite.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a file to someone, once: prints an invite and waits for `inviso receive`.",
        discussion: """
            Prints an invite (and its QR code on a terminal), waits for the receiver, pairs as \
            `inviso invite` does (the words authenticate the receiver), sends the file over the \
            direct path when one comes up and over the server's relay otherwise, and exits once \
            the receiver checked its SHA-256. A folder is sent as NAME.tar (the receiver keeps \
            the archive; it is not unpacked). Nothing is written to disk.
            """)

    @Argument(help: "The file or folder to send.")
    var path: String

    @OptionGroup var options: OneShotOptions
    @OptionGroup var display: QRDisplayOptions

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let source = URL(fileURLWithPath: ChatLoop.expandingTilde(path)).standardizedFileURL
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: source.path, isDirectory: &isDirectory) else {
            throw CLIError("no such file: \(path)")
        }
        var archive: URL?
        defer { if let archive { try? FileManager.default.removeItem(at: archive.deletingLastPathComponent()) } }
        if isDirectory.boolValue { archive = try Self.archive(source) }
        let configuration = try options.configuration(environment: environment)
        let transfer = OneShotTransfer(configuration: configuration, json: options.json)
        let code = try await transfer.send(
            archive ?? source, name: archive?.lastPathComponent, display: display, server: ServerAddress.toShare(configuration.server))
        if code != 0 { throw ExitCode(code) }
    }

    /// `folder` as `NAME.tar` in a fresh private temporary folder (tar(1), ustar format,
    /// no absolute paths).
    static func archive(_ folder: URL) throws -> URL {
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-send-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let archive = temporary.appendingPathComponent(folder.lastPathComponent + ".tar")
        let tar = Process()
        tar.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        tar.arguments = ["tar", "--format=ustar", "-cf", archive.path, "-C", folder.deletingLastPathComponent().path, folder.lastPathComponent]
        tar.standardOutput = FileHandle.nullDevice
        do {
            try tar.run()
        } catch {
            throw CLIError("cannot archive the folder: tar(1) is not available")
        }
        tar.waitUntilExit()
        guard tar.terminationStatus == 0 else { throw CLIError("cannot archive the folder (tar exited with \(tar.terminationStatus))") }
        return archive
    }
}

/// `inviso receive INVITE`: fetches the file `inviso send` offers, checks it, exits.
struct ReceiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receive",
        abstract: "Receive a file someone sends with `inviso send`.",
        discussion: """
            INVITE is what `inviso send` printed (NNNNNN-word-word-word or its link). The file \
            lands in --downloads under the sender's name, cleaned of any path (`../../x` \
            becomes `x`; an existing file is never overwritten: `x (2)`), once its SHA-256 \
            matched. Nothing else is written to disk.
            """)

    @Argument(help: "The invite (NNNNNN-word-word-word or inviso://join/…).")
    var invite: String

    @OptionGroup var options: OneShotOptions

    @Option(help: "Where the file goes (default: ~/Downloads when it exists, else the current directory).")
    var downloads: String?

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        var options = self.options
        let (invite, linkServer) = ServerAddress.splitLink(self.invite)
        if options.server == nil, let linkServer { options.server = linkServer }
        var configuration = try options.configuration(environment: environment)
        var chat = ChatOptions()
        chat.downloads = downloads
        configuration.downloads = chat.downloadsFolder(environment: environment)
        let transfer = OneShotTransfer(configuration: configuration, json: options.json)
        let code = try await transfer.receive(invite)
        if code != 0 { throw ExitCode(code) }
    }
}

/// One file over one ephemeral session: the sender's and the receiver's loop.
struct OneShotTransfer {
    let client: ChatClient
    let json: Bool
    let interactive: Bool

    init(configuration: ChatClient.Configuration, json: Bool) {
        var logger = Logger(label: "inviso.send") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        client = ChatClient(configuration: configuration, logger: logger)
        self.json = json
        interactive = !json && RawTerminal.isTerminal(STDOUT_FILENO)
    }

    /// Invites, sends `file` once paired, returns the exit code.
    func send(_ file: URL, name: String?, display: QRDisplayOptions, server: String?) async throws -> Int32 {
        let invite: Invite
        do {
            invite = try await client.invite()
        } catch {
            throw CLIError("\(error)")
        }
        let link = ServerAddress.link(invite.link, server: server)
        if json {
            emit(ChatEventJSON.invite(invite, link: link))
        } else {
            var text = "Invite: \(invite.text)\nLink:   \(link)\n"
            if interactive, let code = try? QRCode.encode(text: link) { text += display.renderer().render(code) }
            text += "The receiver runs: inviso receive \(invite.text)\(server.map { " --server \($0)" } ?? "")\n"
            FileHandle.standardOutput.write(Data(text.utf8))
        }
        var offered = false
        var progress = ProgressLine(enabled: interactive)
        for await event in client.events {
            switch event {
            case .path where !offered:
                offered = true
                do {
                    try await client.sendFile(file, name: name)
                } catch {
                    say("error: \(error)", json: ChatEventJSON.fileError("\(error)"))
                    await client.leave()
                    return 1
                }
            case .file(let file):
                if json { emit(ChatEventJSON.file(file)) }
                switch file {
                case .offered(let summary):
                    if !json { line("sending \(TerminalText.sanitized(summary.name)) (\(ChatLoop.size(summary.size)))") }
                case .progress(_, let bytes, let total, _):
                    progress.show(bytes: bytes, total: total)
                case .sent(_, let verified):
                    progress.finish()
                    if !json { line(verified ? "sent; the receiver checked its SHA-256" : "the receiver's copy did not match; it was discarded") }
                    await client.leave()
                    return verified ? 0 : 1
                case .refused, .cancelled, .failed:
                    progress.finish()
                    if !json { line("not sent: \(Self.describe(file))") }
                    await client.leave()
                    return 1
                case .incoming(let summary):
                    try? await client.refuseFile(summary.id)
                case .received:
                    break
                }
            case .error(let error):
                if json { emit(ChatEventJSON.fileError("\(error)")) } else { line("error: \(error)") }
            case .closed(let reason):
                progress.finish()
                if !json { line(ChatLoop.describe(reason, sessionID: nil)) } else { emit(ChatEventJSON.closed(reason)) }
                return 1
            default:
                break
            }
        }
        return 1
    }

    /// Joins, accepts the offered file, returns the exit code once it is in.
    func receive(_ invite: String) async throws -> Int32 {
        do {
            try await client.join(invite)
        } catch {
            throw CLIError("\(error)")
        }
        var progress = ProgressLine(enabled: interactive)
        var accepted = false
        for await event in client.events {
            switch event {
            case .file(let file):
                if json { emit(ChatEventJSON.file(file)) }
                switch file {
                case .incoming(let summary):
                    // One file per run: a sender that offers more gets them refused.
                    guard !accepted else {
                        try? await client.refuseFile(summary.id)
                        break
                    }
                    accepted = true
                    if !json { line("receiving \(TerminalText.sanitized(summary.name)) (\(ChatLoop.size(summary.size)))") }
                    do {
                        try await client.acceptFile(summary.id)
                    } catch {
                        if !json { line("error: \(error)") } else { emit(ChatEventJSON.fileError("\(error)")) }
                        await client.leave()
                        return 1
                    }
                case .progress(_, let bytes, let total, _):
                    progress.show(bytes: bytes, total: total)
                case .received(_, let path, let sha256):
                    progress.finish()
                    if !json {
                        line("received \(TerminalText.sanitized(path))")
                        line("SHA-256 \(sha256) (checked)")
                    }
                    // Our `file_complete` reaches the sender before we go: it leaves on it (its
                    // ack ahead of `leave_room`); a sender that goes without one ends the wait too.
                    for _ in 0..<200 where await client.undeliveredCount > 0 {
                        guard await client.state != .closed else { break }
                        try? await Task.sleep(for: .milliseconds(10))
                    }
                    await client.leave()
                    return 0
                case .cancelled, .failed:
                    progress.finish()
                    if !json { line("not received: \(Self.describe(file))") }
                    await client.leave()
                    return 1
                case .offered, .sent, .refused:
                    break
                }
            case .error(let error):
                if json { emit(ChatEventJSON.fileError("\(error)")) } else { line("error: \(error)") }
            case .closed(let reason):
                progress.finish()
                if json { emit(ChatEventJSON.closed(reason)) } else { line(ChatLoop.describe(reason, sessionID: nil)) }
                return 1
            default:
                break
            }
        }
        return 1
    }

    static func describe(_ event: ChatFileEvent) -> String {
        switch event {
        case .refused: "the receiver refused it"
        case .cancelled(_, let byPeer): byPeer ? "the other side cancelled" : "cancelled"
        case .failed(_, let reason): reason
        default: ""
        }
    }

    private func emit(_ line: String) { JSONLines.emitLine(line) }

    private func line(_ text: String) { FileHandle.standardOutput.write(Data((TerminalText.clean(text) + "\n").utf8)) }

    private func say(_ text: String, json line: String) {
        if json { emit(line) } else { self.line(text) }
    }
}

/// A progress bar redrawn in place on a terminal (nothing otherwise).
struct ProgressLine {
    let enabled: Bool
    private var started = ContinuousClock.now
    private var drawn = false
    private var lastPercent = -1

    init(enabled: Bool) { self.enabled = enabled }

    mutating func show(bytes: UInt64, total: UInt64) {
        guard enabled else { return }
        let percent = total == 0 ? 100 : Int(bytes * 100 / total)
        guard percent != lastPercent else { return }
        lastPercent = percent
        let elapsed = BenchNearby.seconds(ContinuousClock.now - started)
        let rate = elapsed > 0 ? Double(bytes) / elapsed : 0
        let width = 30
        let filled = width * percent / 100
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let text = "\r[\(bar)] \(percent)%  \(ChatLoop.size(bytes)) of \(ChatLoop.size(total))  \(ChatLoop.size(UInt64(rate)))/s\u{1B}[K"
        FileHandle.standardOutput.write(Data(text.utf8))
        drawn = true
    }

    mutating func finish() {
        guard drawn else { return }
        FileHandle.standardOutput.write(Data("\n".utf8))
        drawn = false
    }
}
