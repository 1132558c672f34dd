import ArgumentParser
import Foundation
import InvisoKit
import InvisoStore
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs one chat for `inviso invite` and `inviso join`, in one of three modes:
///
/// - **script** (`--json`): standard-input lines are messages, end of input leaves once
///   everything sent is acknowledged (or `--linger` passed); JSON lines on standard output.
/// - **interactive** (standard input and output are terminals): the invite and a spinner
///   while waiting, then a full-screen chat (``ChatScreen``) in raw mode with commands.
/// - **plain** (otherwise): lines in, `peer: text` lines out, the same commands.
struct ChatSession {
    enum Start: Sendable {
        case invite(Invite)
        case joined
        /// A call to a contact: our room waits for them (the text says so).
        case waiting(String)
    }

    enum Mode {
        case script
        case interactive
        case plain
    }

    let client: ChatClient
    let mode: Mode
    let linger: Duration
    /// Whether the session is kept in a store (it is not `--ephemeral`).
    let persistent: Bool
    /// The server, when a peer must be told it (not the default).
    let sharedServer: String?
    /// Our name for the peer (`--as`).
    let displayName: String?
    /// The contact book of the store (none for an ephemeral session).
    let contacts: ContactBook?

    init(options: ChatOptions, configuration: ChatClient.Configuration, environment: [String: String]) throws {
        try self.init(options: options, configuration: configuration, store: options.openStore(environment: environment), environment: environment)
    }

    /// A session on a store already open (`inviso call` read its contact from it).
    init(options: ChatOptions, configuration: ChatClient.Configuration, store: InvisoStore?, environment: [String: String]) {
        let mode = Self.mode(options)
        let client = ChatClient(configuration: configuration, store: store, logger: Self.logger(mode: mode, environment: environment))
        self.init(options: options, client: client, store: store, server: configuration.server, mode: mode)
    }

    /// A session around a client already started (`inviso listen` answered a call with it).
    init(options: ChatOptions, client: ChatClient, store: InvisoStore?, server: ServerEndpoint, mode: Mode) {
        persistent = store != nil
        contacts = store.map(ContactBook.init)
        self.mode = mode
        self.client = client
        sharedServer = ServerAddress.toShare(server)
        displayName = options.displayName
        linger = .seconds(options.linger)
    }

    static func mode(_ options: ChatOptions) -> Mode {
        if options.json { return .script }
        return RawTerminal.isTerminal(STDIN_FILENO) && RawTerminal.isTerminal(STDOUT_FILENO) ? .interactive : .plain
    }

    /// Logs go to standard error: warnings and worse by default, nothing at all on the
    /// chat screen (it would tear it) unless INVISO_LOG_LEVEL asks for them.
    static func logger(mode: Mode, environment: [String: String]) -> Logger {
        var logger = Logger(label: "inviso.chat") { StreamLogHandler.standardError(label: $0) }
        if let level = environment["INVISO_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) {
            logger.logLevel = level
        } else {
            logger.logLevel = mode == .interactive ? .critical : .warning
        }
        return logger
    }

    /// Starts the session with `start` (invite or join), then runs it until it closes.
    /// `backlog` (the last stored messages of a resumed session) is shown before the input
    /// line, in plain and interactive modes.
    func run(
        display: QRDisplayOptions?, backlog: [String] = [], peerName: String? = nil,
        start: @Sendable (ChatClient) async throws -> Start
    ) async throws {
        let (inputs, continuation) = AsyncStream<ChatInput>.makeStream()
        let client = self.client
        let events = Task {
            for await event in client.events { continuation.yield(.event(event)) }
            continuation.yield(.eventsEnded)
        }
        let signals = SignalInputs(into: continuation)
        defer {
            signals.cancel()
            events.cancel()
        }
        var loop = ChatLoop(client: client, mode: mode, linger: linger, continuation: continuation)
        loop.ascii = display?.asciiOnly() ?? false
        loop.backlog = backlog
        loop.persistent = persistent
        loop.contacts = contacts
        loop.displayName = displayName
        if let peerName { loop.peerLabel = TerminalText.sanitized(peerName) }
        do {
            let started = try await start(client)
            loop.sessionID = await client.sessionID
            switch started {
            case .invite(let invite): loop.showInvite(invite, display: display, server: sharedServer)
            case .joined: break
            case .waiting(let text): loop.showWaiting(text, ascii: display?.asciiOnly() ?? false)
            }
        } catch {
            loop.fail(error)
            throw ExitCode.failure
        }
        if mode != .interactive { StandardInputReader.lines(into: continuation) }
        let code = await loop.run(inputs)
        if code != 0 { throw ExitCode(code) }
    }
}

/// The chat's state while it runs; every input is handled here, one at a time.
struct ChatLoop {
    let client: ChatClient
    let mode: ChatSession.Mode
    let linger: Duration
    let continuation: AsyncStream<ChatInput>.Continuation

    private var security: ChatSecurity?
    private var path: ChatPath?
    private var connected = false
    private var inputEnded = false
    private var leaving = false
    private var lingerDeadline: ContinuousClock.Instant?
    private var ticker: Task<Void, Never>?
    private var spinner: Task<Void, Never>?
    private var exitCode: Int32 = 0
    private var proposed: MessageLifetime?
    /// `/leave` was typed once (the second one leaves).
    private var leaveAsked = false
    /// The user marked the peer verified (`/verified`) after comparing safety numbers.
    private var userVerified = false
    /// `/save NAME`: our name for the peer, until the peer's `contact` message arrives.
    private var pendingSaveName: String?
    /// The peer's `contact` message, until we save them too.
    private var peerContact: (identity: [UInt8], nonce: [UInt8])?
    /// The nonce of our `contact` message in this chat, once sent (saving again reuses it).
    private var ourContactNonce: [UInt8]?
    /// Our name for the peer once saved in this chat.
    private var savedContactName: String?
    /// The store's contact book (stored sessions only).
    var contacts: ContactBook?
    /// File transfers under way, by id: for progress lines and the status line.
    private var transfers: [String: TransferShown] = [:]

    struct TransferShown {
        var name: String
        var total: UInt64
        var bytes: UInt64 = 0
        var sending: Bool
        /// The last tenth printed in plain mode.
        var shownTenth = 0
    }
    /// Plain ASCII on screen (`--no-unicode`, `TERM=dumb`).
    var ascii = false
    /// Lines shown once the chat starts (a resumed session's last messages).
    var backlog: [String] = []
    /// Whether the session is stored (not `--ephemeral`), so Ctrl-C can detach.
    var persistent = true
    /// The session's id, once it has one: every JSON event carries it.
    var sessionID: String?
    /// How the peer is shown: `peer`, or the name it sent (``ChatPayload/profile(name:)``).
    var peerLabel = "peer"
    /// Our name for the peer to see, sent once the v2 channel is up (`--as`).
    var displayName: String?
    // Interactive mode.
    private var terminal: RawTerminal?
    private var screen: ChatScreen?
    private var editor = LineEditor()

    init(client: ChatClient, mode: ChatSession.Mode, linger: Duration, continuation: AsyncStream<ChatInput>.Continuation) {
        self.client = client
        self.mode = mode
        self.linger = linger
        self.continuation = continuation
    }

    // MARK: - Before the loop

    /// Says what a call waits for (a spinner on a terminal).
    mutating func showWaiting(_ text: String, ascii: Bool) {
        switch mode {
        case .script:
            emit(JSONLines.object(["event": .string("calling"), "text": .string(text)]))
        case .plain:
            write(text + "\n")
        case .interactive:
            let output = StandardStreamOutput.standardOutput
            let spinner = Spinner(message: text, ascii: ascii)
            self.spinner = Task { await spinner.run(on: output) }
        }
    }

    /// Shows the invite; `server` (when not the default) goes into the link and the hint,
    /// so the peer's `inviso join` finds the same server.
    mutating func showInvite(_ invite: Invite, display: QRDisplayOptions?, server: String?) {
        let link = ServerAddress.link(invite.link, server: server)
        switch mode {
        case .script:
            emit(ChatEventJSON.invite(invite, link: link))
        case .interactive, .plain:
            var text = "Invite: \(invite.text)\nLink:   \(link)\n"
            if mode == .interactive, let display, let code = try? QRCode.encode(text: link) {
                text += display.renderer().render(code)
            }
            text += "Your peer runs: inviso join \(invite.text)\(server.map { " --server \($0)" } ?? "")\n"
            write(text)
            if mode == .interactive {
                let output = StandardStreamOutput.standardOutput
                let spinner = Spinner(message: "waiting for your peer…", ascii: display?.asciiOnly() ?? false)
                self.spinner = Task { await spinner.run(on: output) }
            }
        }
    }

    func fail(_ error: any Error) {
        switch mode {
        case .script: emitError(error)
        case .interactive, .plain: FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
        }
    }

    // MARK: - The loop

    /// Handles inputs until the session closed; returns the exit status.
    mutating func run(_ inputs: AsyncStream<ChatInput>) async -> Int32 {
        for await input in inputs {
            switch input {
            case .event(let event):
                if await handle(event) { return finish() }
            case .eventsEnded:
                return finish()
            case .line(let bytes):
                await submit(String(decoding: bytes, as: UTF8.self))
            case .keys(let bytes):
                for edit in editor.feed(bytes) {
                    switch edit {
                    case .edited: if let screen { write(screen.edited(editor)) }
                    case .submitted(let line): await submit(line)
                    case .interrupted: await detach()
                    case .endOfInput: await leave()
                    }
                }
            case .inputEnded:
                inputEnded = true
                if mode == .interactive { await leave() } else { await leaveIfDone() }
            case .resized:
                if var screen, let size = RawTerminal.size() {
                    write(screen.resize(rows: size.rows, columns: size.columns, input: editor))
                    self.screen = screen
                }
            case .interrupted:
                if leaving { return finish() }
                await detach()
            case .tick:
                await leaveIfDone()
            }
        }
        return finish()
    }

    /// Handles one engine event; `true` when the session is over.
    private mutating func handle(_ event: ChatEvent) async -> Bool {
        // A line printed while the spinner runs (an error, the end) goes after the spinner
        // erased its own line, not onto it.
        if screen == nil, let running = spinner, mode == .interactive {
            switch event {
            case .error, .closed, .warning:
                running.cancel()
                await running.value
                spinner = nil
            default:
                break
            }
        }
        switch event {
        case .secured(let security):
            self.security = security
        case .path(let path):
            self.path = path
            if !connected, let security {
                connected = true
                becameConnected(security, path: path)
                // Our chosen name goes inside the channel, once; only v2 peers know the frame.
                if let name = displayName, security.version == .v2 {
                    displayName = nil
                    _ = try? await client.send(.profile(name: name))
                }
            } else if mode == .script {
                emit(ChatEventJSON.path(path))
            }
            updateStatus()
            await leaveIfDone()
        case .message(_, .contact(let identity, let nonce)):
            peerContact = (identity, nonce)
            if let pending = pendingSaveName {
                completeSave(pending)
            } else if let saved = savedContactName {
                // Saved already, and the peer saved again with another nonce: the secret follows.
                completeSave(saved)
            } else if mode == .script {
                emit(JSONLines.object(["event": .string("contact_offered")]))
            } else {
                show("* your peer saved you as a contact; /save NAME saves them too, so that you can call each other")
            }
        case .message(let id, let payload):
            if mode == .script {
                switch payload {
                case .lifetimeProposal, .lifetimeAccept: break  // the lifetime events tell these
                case .lifetimeReject: emit(JSONLines.object(["event": .string("lifetime_rejected")]))
                default: emit(ChatEventJSON.message(id: id, payload: payload))
                }
            } else {
                switch payload {
                case .lifetimeProposal, .lifetimeAccept:
                    break  // told by the lifetime events
                case .lifetimeReject:
                    show("* your peer rejected the proposed lifetime; it stays as it was")
                case .profile(let name):
                    peerLabel = TerminalText.sanitized(name)
                    show("* your peer's name is \(peerLabel)")
                default:
                    show((mode == .interactive ? Self.now() + " " : "") + "\(peerLabel): " + Self.describe(payload))
                }
            }
        case .delivered(let id):
            if mode == .script { emit(ChatEventJSON.delivered(id: id)) }
            if var screen {
                write(screen.mark(id, state: "delivered", input: editor))
                self.screen = screen
            }
            await leaveIfDone()
        case .lifetimeProposed(let lifetime):
            proposed = lifetime
            if mode == .script {
                emit(ChatEventJSON.lifetimeProposed(lifetime.rawValue))
            } else {
                show("* your peer proposes that messages \(Self.describe(lifetime)): /accept or /reject")
            }
        case .lifetime(let lifetime):
            if mode == .script {
                emit(ChatEventJSON.lifetime(lifetime.rawValue))
            } else {
                show("* messages now \(Self.describe(lifetime))")
            }
        case .peer(let online):
            if mode == .script {
                emit(JSONLines.object(["event": .string("presence"), "online": .bool(online)]))
            } else {
                show(online ? "* your peer is back" : "* your peer is offline; your messages will be delivered when they return")
            }
        case .warning(let warning):
            if mode == .script { emit(ChatEventJSON.warning(warning)) } else { show("* warning: \(warning)") }
        case .error(let error):
            exitCode = 1
            if mode == .script {
                emitError(error)
            } else if ![.pairingFailed, .pairingTimedOut, .expired].contains(error.code) {
                // (Those end the chat: the closing line says it once, with what to do.)
                show("* error: \(error)")
            }
        case .closed(let reason):
            if reason != .left && reason != .peerLeft && reason != .suspended { exitCode = 1 }
            if mode == .script {
                emit(ChatEventJSON.closed(reason))
            } else {
                show("* " + Self.describe(reason, sessionID: await client.sessionID))
            }
            return true
        case .file(let file):
            fileEvent(file)
            await leaveIfDone()
        case .state, .transportCandidates:
            break
        }
        return false
    }

    /// A file transfer's event: a JSON line, a line for people, the status line.
    private mutating func fileEvent(_ event: ChatFileEvent) {
        if mode == .script { emit(ChatEventJSON.file(event)) }
        switch event {
        case .offered(let file):
            transfers[file.id] = TransferShown(name: TerminalText.sanitized(file.name), total: file.size, sending: true)
            show("* offered \(TerminalText.sanitized(file.name)) (\(Self.size(file.size))); waiting for your peer to accept [\(file.id.prefix(8))]")
        case .incoming(let file):
            transfers[file.id] = TransferShown(name: TerminalText.sanitized(file.name), total: file.size, sending: false)
            show("* \(peerLabel) offers \(TerminalText.sanitized(file.name)) (\(Self.size(file.size))): /accept or /refuse [\(file.id.prefix(8))]")
        case .progress(let id, let bytes, let total, _):
            guard var shown = transfers[id] else { break }
            shown.bytes = bytes
            let tenth = total == 0 ? 10 : Int(bytes * 10 / total)
            if mode == .plain, tenth > shown.shownTenth, tenth < 10 {
                show("* \(shown.name): \(tenth * 10) % (\(Self.size(bytes)) of \(Self.size(total)))")
            }
            shown.shownTenth = max(shown.shownTenth, tenth)
            transfers[id] = shown
        case .received(let id, let path, let sha256):
            transfers[id] = nil
            show("* received \(TerminalText.sanitized(path)) (SHA-256 \(sha256.prefix(16))…, checked)")
        case .sent(let id, let verified):
            let name = transfers.removeValue(forKey: id)?.name ?? id.prefix(8).description
            show(verified ? "* \(name) was delivered; your peer checked its SHA-256" : "* \(name) arrived damaged and was discarded")
        case .refused(let id):
            let name = transfers.removeValue(forKey: id)?.name ?? id.prefix(8).description
            show("* your peer refused \(name)")
        case .cancelled(let id, let byPeer):
            let name = transfers.removeValue(forKey: id)?.name ?? id.prefix(8).description
            show(byPeer ? "* your peer cancelled \(name)" : "* cancelled \(name)")
        case .failed(let id, let reason):
            let name = transfers.removeValue(forKey: id)?.name ?? id.prefix(8).description
            show("* \(name) failed: \(reason)")
            if mode == .script { exitCode = 1 }
        }
        updateStatus()
    }

    /// `/save NAME`: sends our identity and a nonce inside the channel; the contact is
    /// saved once the peer's arrive (at once when they saved us first).
    private mutating func save(_ name: String) async throws {
        guard let contacts else { throw CLIError("an ephemeral chat cannot save contacts") }
        guard let security = await client.security, security.version == .v2, security.isVerified else {
            throw CLIError("only a verified chat (an invite with words) can be saved as a contact")
        }
        if let existing = try contacts.named(name), existing.identity != peerContact?.identity {
            throw CLIError("there is already a contact called \(name) (inviso contacts rename)")
        }
        // One nonce per chat: saving again (another name) must not leave the two sides
        // with different secrets.
        if ourContactNonce == nil {
            var generator = SystemRandomNumberGenerator()
            let nonce = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            try await client.send(.contact(identity: try contacts.identityPublicKey(), nonce: nonce))
            ourContactNonce = nonce
        }
        if peerContact != nil {
            completeSave(name)
        } else {
            pendingSaveName = name
            if mode != .script { show("* saving \(TerminalText.sanitized(name)) once your peer saves you too (/save on their side)") }
        }
    }

    /// Saves the peer as `name`, with the secret of both sides' nonces (ours was sent).
    private mutating func completeSave(_ name: String) {
        pendingSaveName = nil
        guard let contacts, let peer = peerContact, let ourNonce = ourContactNonce, let ours = try? contacts.identityPublicKey()
        else { return }
        // Saved before (an earlier chat, or this one): "verified" stays.
        let known = (try? contacts.all())?.first { $0.identity == peer.identity }
        let contact = Contact(
            name: name, identity: peer.identity,
            secret: ContactCall.secret(ourIdentity: ours, ourNonce: ourNonce, theirIdentity: peer.identity, theirNonce: peer.nonce),
            verified: userVerified || known?.verified == true, savedAt: Date().timeIntervalSince1970)
        do {
            try contacts.save(contact)
        } catch {
            return show("* the contact was not saved: \(error)")
        }
        savedContactName = name
        if mode == .script {
            emit(JSONLines.object(["event": .string("contact_saved"), "name": .string(name), "fingerprint": .string(contact.fingerprint)]))
        } else {
            show("* saved \(TerminalText.sanitized(name)) as a contact: inviso call \(TerminalText.sanitized(name)) starts a new chat with them")
        }
    }

    /// A byte count for people.
    static func size(_ bytes: UInt64) -> String {
        if bytes < 1_024 { return "\(bytes) B" }
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes) / 1_024
        var unit = 0
        while value >= 1_024, unit < units.count - 1 {
            value /= 1_024
            unit += 1
        }
        return String(format: value < 10 ? "%.1f %@" : "%.0f %@", value, units[unit])
    }

    private mutating func becameConnected(_ security: ChatSecurity, path: ChatPath) {
        spinner?.cancel()
        spinner = nil
        switch mode {
        case .script:
            emit(ChatEventJSON.connected(security, path: path))
        case .plain:
            for line in backlog { show(line) }
            backlog = []
            write("* connected: \(security.version.rawValue), \(security.isVerified ? "verified" : "unverified"), \(path)\n")
            if !security.isVerified {
                show("* this chat is encrypted but not verified (a bare six-digit code, v1): compare the safety number (/verify) with your peer, then /verified")
            }
        case .interactive:
            // Let the spinner erase its line before the screen takes over.
            usleep(20_000)
            terminal = RawTerminal()
            let size = RawTerminal.size() ?? (rows: 24, columns: 80)
            let screen = ChatScreen(rows: size.rows, columns: size.columns)
            write(screen.begin(input: editor))
            self.screen = screen
            StandardInputReader.keys(into: continuation)
            for line in backlog { show(line) }
            backlog = []
            show("* connected (\(security.version.rawValue)). /verify shows the safety number, /help the commands.")
            if !security.isVerified {
                show("* this chat is encrypted but not verified (a bare six-digit code, v1): compare the safety number (/verify) with your peer, then /verified")
            }
        }
    }

    // MARK: - Sending and commands

    private mutating func submit(_ line: String) async {
        let trimmed = line.trimmingSpaces()
        guard !trimmed.isEmpty else { return }
        // A command starts the line with one slash; `//` sends a line that starts with `/`,
        // and a line with a space before its slash is text.
        if mode != .script, line.hasPrefix("/"), !line.hasPrefix("//") {
            await command(trimmed)
            return
        }
        if mode == .script, trimmed.hasPrefix("{"), let object = Self.jsonObject(trimmed) {
            if let command = object["command"] as? String { return await scriptCommand(command, object) }
            if let text = object["text"] as? String { return await send(text) }
        }
        let text = mode != .script && line.hasPrefix("//") ? String(line.dropFirst()) : line
        await send(text)
    }

    private mutating func send(_ text: String) async {
        do {
            let id = try await client.send(text: text)
            if mode == .script {
                emit(ChatEventJSON.sent(id: id))
            } else if mode == .interactive {
                show("\(Self.now()) you: " + text, id: id, state: path == nil ? "queued" : "sent")
            }
        } catch {
            if mode == .script { emitError(error) } else { show("* not sent: \(error)") }
        }
    }

    /// A JSON object on one line, or nil.
    private static func jsonObject(_ line: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }

    /// A command in script mode: `{"command":"verify"}`, `{"command":"verified"}`,
    /// `{"command":"rename","name":N}`, `{"command":"lifetime","lifetime":L}`,
    /// `{"command":"accept"}`, `{"command":"reject"}`, `{"command":"leave"}`; each answers
    /// with an event or a JSON error.
    private mutating func scriptCommand(_ command: String, _ object: [String: Any]) async {
        do {
            switch command {
            case "verify", "verified":
                guard let security = await client.security else { throw CLIError("not connected yet") }
                if command == "verified" { try await client.markVerified() }
                emit(JSONLines.object([
                    "event": .string(command == "verify" ? "safety_number" : "verified"),
                    "digits": .string(security.safetyNumber), "verified": .bool(security.isVerified || command == "verified"),
                ]))
            case "rename":
                guard let name = object["name"] as? String, !name.isEmpty else { throw CLIError("rename needs a \"name\"") }
                try await client.rename(to: name)
                emit(JSONLines.object(["event": .string("renamed"), "name": .string(name)]))
            case "lifetime":
                guard let text = object["lifetime"] as? String, let lifetime = MessageLifetime(rawValue: text) else {
                    throw CLIError("lifetime needs \"lifetime\": ephemeral, 1h, 6h, 1d, 7d or 30d")
                }
                try await client.proposeLifetime(lifetime)
                emit(JSONLines.object(["event": .string("lifetime_sent"), "lifetime": .string(lifetime.rawValue)]))
            case "accept", "reject":
                guard let proposed else { throw CLIError("no lifetime proposal to \(command)") }
                if command == "accept" { try await client.acceptLifetime(proposed) } else { try await client.rejectLifetime() }
                self.proposed = nil
            case "send":
                guard let path = object["path"] as? String, !path.isEmpty else { throw CLIError("send needs a \"path\"") }
                try await client.sendFile(URL(fileURLWithPath: path), name: object["name"] as? String)
            case "save":
                guard let name = object["name"] as? String, !name.isEmpty, name.count <= 64 else {
                    throw CLIError("save needs a \"name\" of 1 to 64 characters")
                }
                try await save(name)
            case "accept_file":
                try await client.acceptFile(object["id"] as? String)
            case "refuse_file":
                try await client.refuseFile(object["id"] as? String)
            case "cancel_file":
                try await client.cancelFile(object["id"] as? String)
            case "leave":
                await leave()
            default:
                throw CLIError("unknown command \(command)")
            }
        } catch {
            emitError(error)
        }
    }

    private mutating func command(_ line: String) async {
        let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
        let argument = parts.count > 1 ? parts[1].trimmingSpaces() : ""
        let offerWaits = !(await client.pendingFileOffers.isEmpty)
        do {
            switch parts[0] {
            case "/verify":
                guard let security = await client.security else {
                    show("* not connected yet")
                    return
                }
                show("* safety number: \(SafetyNumberText.grouped(security.safetyNumber))")
                show(security.isVerified
                    ? "* verified: the invite's secret words authenticated your peer; compare the numbers to rule out a leaked invite"
                    : "* unverified (v1): compare these digits with your peer over another channel, then /verified")
            case "/verified":
                guard let security = await client.security else {
                    show("* not connected yet")
                    return
                }
                try await client.markVerified()
                userVerified = true
                updateStatus()
                show(security.isVerified
                    ? "* already verified by the invite's words; your comparison is noted"
                    : "* marked verified: you compared the safety number with your peer's")
            case "/rename":
                guard !argument.isEmpty else {
                    show("* usage: /rename NAME")
                    return
                }
                try await client.rename(to: argument)
                show("* renamed to \(argument)")
            case "/lifetime":
                guard let lifetime = MessageLifetime(rawValue: argument) else {
                    show("* usage: /lifetime ephemeral|1h|6h|1d|7d|30d")
                    return
                }
                try await client.proposeLifetime(lifetime)
                show("* proposed that messages \(Self.describe(lifetime)); your peer accepts or rejects")
            case "/accept":
                // A file offer (named by its id, or the only one) before a lifetime proposal.
                if !argument.isEmpty || (proposed == nil && offerWaits) {
                    try await client.acceptFile(argument.isEmpty ? nil : argument)
                    return
                }
                guard let proposed else {
                    show("* nothing to accept")
                    return
                }
                try await client.acceptLifetime(proposed)
                self.proposed = nil
            case "/refuse":
                try await client.refuseFile(argument.isEmpty ? nil : argument)
                show("* refused")
            case "/reject":
                if !argument.isEmpty || (proposed == nil && offerWaits) {
                    try await client.refuseFile(argument.isEmpty ? nil : argument)
                    show("* refused")
                    return
                }
                guard proposed != nil else {
                    show("* nothing to reject")
                    return
                }
                try await client.rejectLifetime()
                proposed = nil
            case "/send":
                guard !argument.isEmpty else {
                    show("* usage: /send PATH")
                    return
                }
                try await client.sendFile(URL(fileURLWithPath: Self.expandingTilde(argument)))
            case "/cancel":
                try await client.cancelFile(argument.isEmpty ? nil : argument)
            case "/save":
                guard !argument.isEmpty, argument.count <= 64 else {
                    show("* usage: /save NAME")
                    return
                }
                try await save(argument)
            case "/files":
                let all = await client.fileTransfers + (await client.pendingFileOffers)
                if all.isEmpty { show("* no file transfers") }
                for file in all {
                    let shown = transfers[file.id]
                    let percent = file.size == 0 ? 100 : Int((shown?.bytes ?? 0) * 100 / file.size)
                    show("* \(file.id.prefix(8)) \(file.sending ? "sending" : "receiving") \(TerminalText.sanitized(file.name)) \(Self.size(file.size)) \(percent) %")
                }
            case "/leave", "/quit":
                // Leaving wipes the keys for good: asked twice. Ctrl-C detaches instead.
                guard leaveAsked else {
                    leaveAsked = true
                    show("* /leave again to end this chat for good (its keys are wiped); Ctrl-C detaches and keeps it")
                    return
                }
                await leave()
            case "/help":
                show("* /verify  /verified  /rename NAME  /lifetime 1h|6h|1d|7d|30d|ephemeral  /accept [ID]  /reject  /send PATH  /refuse [ID]  /cancel [ID]  /files  /leave (for good)  //text sends /text  Ctrl-C detaches")
            default:
                show("* unknown command \(TerminalText.sanitized(parts[0])) (try /help)")
            }
        } catch {
            show("* \(error)")
        }
    }

    // MARK: - Leaving

    /// After end of input: leaves once connected and nothing is left undelivered, or once
    /// `--linger` has passed since then.
    private mutating func leaveIfDone() async {
        guard inputEnded, !leaving, connected else { return }
        // A file under way keeps the chat open (and the linger starts after it).
        if !(await client.fileTransfers.isEmpty) {
            lingerDeadline = nil
            return
        }
        if lingerDeadline == nil {
            lingerDeadline = .now + linger
            let continuation = self.continuation
            ticker = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(100))
                    continuation.yield(.tick)
                }
            }
        }
        let undelivered = await client.undeliveredCount
        if undelivered == 0 {
            await leave()
        } else if let deadline = lingerDeadline, ContinuousClock.now >= deadline {
            if mode == .script {
                emitError(CLIError("\(undelivered) messages were not acknowledged"))
            }
            exitCode = 1
            await leave()
        }
    }

    /// Ctrl-C: stops without leaving, so the session stays stored and resumable (as after
    /// a crash); the closing line says how to resume. An ephemeral session keeps nothing,
    /// and one not yet connected has nothing to resume: those leave.
    private mutating func detach() async {
        guard !leaving else { return }
        guard connected, persistent else { return await leave() }
        leaving = true
        ticker?.cancel()
        await client.suspend()
    }

    private mutating func leave() async {
        guard !leaving else { return }
        leaving = true
        ticker?.cancel()
        await client.leave()
    }

    private mutating func finish() -> Int32 {
        ticker?.cancel()
        spinner?.cancel()
        if let screen {
            write(screen.end())
            self.screen = nil
        }
        terminal?.restore()
        terminal = nil
        return exitCode
    }

    // MARK: - Output

    private mutating func updateStatus() {
        guard var screen, let security, let path else { return }
        let status = ChatStatusLine(
            state: .secure(verified: security.isVerified || userVerified, path: path == .direct ? .direct : .relay), ascii: ascii)
        let files = transfers.values.sorted { $0.name < $1.name }.map { shown in
            let percent = shown.total == 0 ? 100 : Int(shown.bytes * 100 / shown.total)
            return "\(shown.sending ? (ascii ? "^" : "↑") : (ascii ? "v" : "↓")) \(shown.name) \(percent)%"
        }
        write(screen.setStatus(([status.text] + files).joined(separator: "  "), input: editor))
        self.screen = screen
    }

    /// A line for people: on the chat screen, or on standard output.
    /// Writes one JSON event (script mode), with the session's id once there is one.
    private func emit(_ line: String) {
        guard let sessionID, line.hasPrefix("{\"event\":") else { return JSONLines.emitLine(line) }
        JSONLines.emitLine("{\"session\":" + JSONValue.string(sessionID).json + "," + line.dropFirst())
    }

    private func emitError(_ error: any Error) {
        emit(JSONLines.object(["event": .string("error"), "error": .string(JSONLines.describe(error))]))
    }

    /// Each `\n` of `line` starts a new line (the safety number's rows); every other
    /// control character is shown as U+FFFD.
    private mutating func show(_ line: String, id: UInt64? = nil, state: String? = nil) {
        switch mode {
        case .script: break
        case .interactive:
            if var screen {
                write(screen.message(line, id: id, state: state, input: editor))
                self.screen = screen
            } else {
                write(Self.cleanLines(line))
            }
        case .plain:
            write(Self.cleanLines(line))
        }
    }

    /// The local time of day, for the chat screen's messages.
    private static func now() -> String {
        Date().formatted(Date.FormatStyle(date: .omitted, time: .shortened))
    }

    private static func cleanLines(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { TerminalText.clean(String($0)) + "\n" }.joined()
    }

    private func write(_ text: String) {
        StandardStreamOutput.standardOutput.write(text)
    }

    /// What a lifetime means, after "messages": "are not kept" or "disappear after 7d".
    static func describe(_ lifetime: MessageLifetime) -> String {
        lifetime == .ephemeral ? "are not kept" : "disappear after \(lifetime.rawValue)"
    }

    /// Why a chat closed, in a sentence with what to do next.
    static func describe(_ reason: ChatCloseReason, sessionID: String?) -> String {
        let resume = sessionID.map { "inviso resume \($0.prefix(8))" } ?? "inviso resume ID"
        return switch reason {
        case .left: "you left the chat; its keys are wiped"
        case .peerLeft: "your peer left the chat"
        case .pairingFailed:
            "pairing failed: the invite's words did not match, or someone interfered. Ask your peer for a new invite."
        case .expired: "the invite expired or was already used; ask for a new one (inviso invite makes one)"
        case .connectionLost: "the server could not be reached for too long; the chat is kept: continue it with \(resume)"
        case .suspended: "detached; the chat is kept: continue it with \(resume)"
        }
    }

    static func describe(_ payload: ChatPayload) -> String {
        switch payload {
        case .text(let text): text
        case .location(let latitude, let longitude, _, _): "[location \(latitude), \(longitude)]"
        case .voice(let duration, _, _, _): "[voice message, \(Int(duration.rounded())) s]"
        case .lifetimeProposal, .lifetimeAccept, .lifetimeReject: "[lifetime change]"
        case .profile(let name): "[name: \(name)]"
        case .file: "[file transfer]"
        case .contact: "[contact]"
        }
    }

    /// `~/x` with the home directory.
    static func expandingTilde(_ path: String) -> String {
        guard path.hasPrefix("~/"), let home = ProcessInfo.processInfo.environment["HOME"] else { return path }
        return home + path.dropFirst()
    }
}
