import ArgumentParser
import Foundation
import InvisoNearby
import InvisoStore
import InvisoTime

/// `inviso nearby`: chat with the people on your network, no server.
struct NearbyCommand: AsyncParsableCommand {
    /// The folder of the data directory that holds the nearby store.
    static let directoryName = "nearby"

    static let configuration = CommandConfiguration(
        commandName: "nearby",
        abstract: "Chat with the people on your network, with no server (DNS-SD discovery).",
        discussion: """
            Announces you as NAME on the local network (DNS-SD, service _inviso._tcp) and \
            lists the people it finds. Type /connect NAME to ask someone to talk; they \
            /accept or /reject. Messages are end-to-end encrypted (Noise XX with signed \
            Ed25519 identities); compare safety numbers with /verify. Without a DNS-SD \
            daemon (avahi-daemon on Linux), connect directly with --peer HOST:PORT.

            Commands: /connect NAME, /accept [NAME], /reject [NAME], /block NAME, \
            /trust NAME, /msg NAME TEXT, /open NAME, /send PATH, /accept file [ID], /cancel [ID], \
            /group create NAME MEMBER…, /group add|remove NAME MEMBER, /group leave NAME, \
            /reject file [ID], /verify [NAME], /verified [NAME], /lifetime 24h|7d|30d|never, \
            /lifetime reject, /peers, /history [NAME], /quit. Any other line is a message to \
            the open conversation (start it with // to send a line that begins with /).
            """
    )

    @Option(help: "Your display name on the network (1–64 bytes).")
    var name: String?

    @Option(help: "Data directory (default: the per-user Inviso data directory); nearby state is in its nearby/ folder.")
    var data: String?

    @Option(help: "Where received files go (default: the data directory's nearby/downloads).")
    var downloads: String?

    @Option(help: "Accept files up to this many MiB from verified people without asking.")
    var autoAcceptMib: UInt64 = 10

    @Option(help: "TCP port to listen on (0: any free port).")
    var port: Int = 0

    @Option(help: "Connect to HOST:PORT directly (repeatable; works without DNS-SD).")
    var peer: [String] = []

    @Flag(help: "Do not announce or browse with DNS-SD (use --peer).")
    var noDiscovery = false

    @Flag(help: "Script mode: commands and messages on stdin, one JSON event per line on stdout.")
    var json = false

    @OptionGroup var qrOptions: QRDisplayOptions

    /// Shifts the wall clock (tests: messages that expire while the program is not running).
    @Option(name: .customLong("clock-offset"), help: .hidden)
    var clockOffset: Int64 = 0

    func run() async throws {
        // avahi's compatibility library prints a warning on first use unless told not to.
        setenv("AVAHI_COMPAT_NOWARN", "1", 0)
        let environment = ProcessInfo.processInfo.environment
        let displayName = name ?? environment["USER"] ?? "inviso"
        do {
            try NearbyHello.checkName(displayName)
        } catch {
            throw CLIError("--name: \(error.context)")
        }
        let directory = DataDirectory.url(data).appendingPathComponent(Self.directoryName)
        let store: InvisoStore
        let identity: NearbyIdentity
        let clock = OffsetClock(offset: .seconds(clockOffset))
        let now = Int64((clock.wallClock.timeIntervalSince1970 * 1000).rounded())
        do {
            store = try InvisoStore(directory: directory, keySource: .fromEnvironment(environment))
            identity = try NearbyNode.loadIdentity(from: store, now: now)
        } catch let error as StoreError {
            throw CLIError(SessionStoreOptions.explain(error, directory: directory, environment: environment))
        } catch {
            throw CLIError("the nearby identity in \(directory.path) cannot be read: \(error)")
        }
        let downloadsFolder = downloads.map { URL(fileURLWithPath: $0) } ?? directory.appendingPathComponent("downloads")
        var configuration = NearbyNode.Configuration(name: displayName, downloads: downloadsFolder)
        configuration.autoAcceptBytes = autoAcceptMib * 1024 * 1024
        configuration.port = port
        configuration.discovery = !noDiscovery
        let node = try NearbyNode(identity: identity, store: store, configuration: configuration, clock: clock)
        let output = NearbyOutput(json: json)
        let session = NearbyCLISession(node: node, output: output, clock: clock, qr: qrOptions.renderer())
        // The full screen on an interactive terminal; plain lines when piped.
        let raw = json ? nil : RawTerminal.isTerminal(STDOUT_FILENO) ? RawTerminal() : nil
        if raw != nil {
            let size = RawTerminal.size() ?? (rows: 24, columns: 80)
            await session.startScreen(rows: size.rows, columns: size.columns)
        }

        let runner = Task { try await node.run() }
        let events = Task {
            for await event in node.events { await session.handle(event) }
        }
        for target in peer {
            let parts = target.split(separator: ":")
            guard parts.count == 2, let port = Int(parts[1]) else {
                await session.report("--peer takes HOST:PORT, not \(target)")
                continue
            }
            await node.connect(host: String(parts[0]), port: port)
        }
        if let raw {
            let (inputs, continuation) = AsyncStream<ChatInput>.makeStream()
            StandardInputReader.keys(into: continuation)
            let signals = SignalInputs(into: continuation)
            loop: for await input in inputs {
                switch input {
                case .keys(let bytes):
                    guard await session.keys(bytes) else { break loop }
                case .resized:
                    let size = RawTerminal.size() ?? (rows: 24, columns: 80)
                    await session.resized(rows: size.rows, columns: size.columns)
                case .interrupted, .inputEnded:
                    break loop
                default:
                    break
                }
            }
            signals.cancel()
            await session.endScreen()
            raw.restore()
        } else {
            for await line in StandardInputLines.stream() {
                guard await session.input(String(decoding: line, as: UTF8.self)) else { break }
            }
        }
        // Give acknowledgements already written a moment to leave.
        try? await Task.sleep(for: .milliseconds(200))
        await node.stop()
        _ = await events.value
        do {
            try await runner.value
        } catch {
            throw CLIError("cannot listen on TCP port \(port): \(error)")
        }
    }
}

/// How events are shown: one JSON object per line, or plain text lines.
struct NearbyOutput: Sendable {
    let json: Bool

    func emit(_ event: String, _ fields: KeyValuePairs<String, JSONValue>, text: @autoclosure () -> String) {
        if json {
            var all: [(String, JSONValue)] = [("event", .string(event))]
            for (key, value) in fields { all.append((key, value)) }
            JSONLines.emitLine("{" + all.map { JSONValue.string($0.0).json + ":" + $0.1.json }.joined(separator: ",") + "}")
        } else {
            JSONLines.emitLine(text())
        }
    }

    func error(_ message: String) {
        emit("error", ["message": .string(message)], text: "! \(message)")
    }
}

/// The CLI's side of a nearby session: the open conversation, the command parser, and in
/// full-screen mode the ``NearbyScreen`` with its input line.
actor NearbyCLISession {
    let node: NearbyNode
    let output: NearbyOutput
    private var open: String?
    /// The full-screen view (interactive terminals only).
    private var screen: NearbyScreen?
    private var editor = LineEditor()
    private let terminal = StandardStreamOutput.standardOutput
    private var me = ""
    /// File transfers in progress, for the status line: id → text.
    private var transfers: [String: String] = [:]
    private let clock: any InvisoClock
    private let timeFormat: Date.FormatStyle
    private let qrRenderer: QRTerminalRenderer

    init(node: NearbyNode, output: NearbyOutput, clock: any InvisoClock, qr: QRTerminalRenderer) {
        self.node = node
        self.output = output
        self.clock = clock
        qrRenderer = qr
        timeFormat = Date.FormatStyle(date: .omitted, time: .shortened)
    }

    // MARK: - Full screen

    /// Switches to the full-screen view of `rows` × `columns`.
    func startScreen(rows: Int, columns: Int) async {
        var screen = NearbyScreen(rows: rows, columns: columns)
        screen.append("Inviso nearby: the people on this network are on the left. /connect NAME asks to talk, /help lists the commands.")
        self.screen = screen
        await redraw()
    }

    /// Leaves the full-screen view.
    func endScreen() {
        guard let screen else { return }
        terminal.write(screen.end())
        self.screen = nil
    }

    /// The terminal changed size.
    func resized(rows: Int, columns: Int) async {
        screen?.resize(rows: rows, columns: columns)
        await redraw()
    }

    /// Keys typed in full-screen mode; returns false to quit.
    func keys(_ bytes: [UInt8]) async -> Bool {
        for edit in editor.feed(bytes) {
            switch edit {
            case .edited:
                if let screen { terminal.write(screen.edited(editor)) }
            case .submitted(let line):
                let goOn = await input(line)
                await redraw()
                guard goOn else { return false }
            case .interrupted, .endOfInput:
                return false
            }
        }
        return true
    }

    /// Refreshes the people pane, the title and the status line, and draws everything.
    private func redraw() async {
        guard screen != nil else { return }
        var people: [NearbyScreen.Person] = []
        var nearby = 0
        var connected = 0
        for person in await node.people() {
            let presence: NearbyScreen.Person.Presence = person.connected ? .connected : person.online ? .nearby : .away
            if person.online { nearby += 1 }
            if person.connected { connected += 1 }
            people.append(NearbyScreen.Person(
                name: person.info.name, fingerprint: person.info.fingerprint, status: person.info.status.rawValue, presence: presence))
        }
        for group in await node.groupNames() {
            people.append(NearbyScreen.Person(name: group, fingerprint: "", status: "group", presence: .away))
        }
        var title = ""
        if let open {
            let lifetime = await node.lifetime(with: open) ?? .never
            let kept = lifetime == .never ? "messages kept" : "messages disappear after \(lifetime)"
            if let person = people.first(where: { $0.name == open && $0.status != "group" }) {
                title = "\(open) · \(person.status) · \(kept)"
            } else if people.contains(where: { $0.name == open }) {
                title = "\(open) · group · \(kept)"
            } else {
                title = "\(open) · not connected"
            }
        }
        var status = "\(me) · \(nearby) nearby · \(connected) connected"
        for transfer in transfers.values.sorted() { status += " · " + transfer }
        status += " · /help"
        screen?.people = people
        screen?.title = title
        screen?.status = status
        if let screen { terminal.write(screen.render(input: editor)) }
    }

    /// Opens `name`'s conversation; in full-screen mode shows its stored messages when it
    /// has none on screen yet.
    private func openConversation(_ name: String) async {
        open = name
        guard screen != nil else { return }
        screen?.open(name)
        if screen?.lines(of: name).isEmpty == true {
            for entry in await node.history(with: name) {
                screen?.append("\(time(entry.sentAt)) \(entry.from): \(entry.text)", to: name, counts: false)
            }
        }
    }

    /// Shows an event: a JSON object or a plain line, or in full-screen mode a line of
    /// `conversation` (nil: the open one).
    private func show(
        _ event: String, _ fields: KeyValuePairs<String, JSONValue>, in conversation: String? = nil, counts: Bool = true,
        text: @autoclosure () -> String
    ) {
        if screen != nil {
            let line = text()  // the text may read the screen: not while appending to it
            screen?.append(line, to: conversation, counts: counts)
        } else {
            output.emit(event, fields, text: text())
        }
    }

    private func error(_ message: String) {
        show("error", ["message": .string(message)], counts: false, text: "! \(message)")
    }

    /// Reports an error of the command line itself.
    func report(_ message: String) async {
        error(message)
        await redraw()
    }

    private func time(_ milliseconds: UInt64) -> String {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000).formatted(timeFormat)
    }

    // MARK: - Events

    func handle(_ event: NearbyEvent) async {
        switch event {
        case .ready(let name, let port, let fingerprint):
            me = "\(name) \(fingerprint) · port \(port)"
            show("ready", ["name": .string(name), "port": .int(port), "fingerprint": .string(fingerprint)],
                 text: "You are \(name) (\(fingerprint)), listening on port \(port). /peers lists people, /connect NAME asks to talk.")
        case .peerFound(let peer):
            if screen == nil {
                output.emit("peer_found", fields(peer), text: "+ \(peer.name) (\(peer.fingerprint), \(peer.status.rawValue)) is nearby")
            }
        case .peerLost(let name):
            if screen == nil { output.emit("peer_lost", ["name": .string(name)], text: "- \(name) left the network") }
        case .request(let peer):
            show("request", fields(peer), counts: false,
                 text: "? \(peer.name) (\(peer.fingerprint)) asks to talk: /accept \(peer.name) or /reject \(peer.name)")
        case .connected(let peer):
            if open == nil { await openConversation(peer.name) }
            show("connected", fields(peer), in: peer.name, counts: false,
                 text: "= connected to \(peer.name) (\(peer.status.rawValue))\(open == peer.name || screen != nil ? "" : "; /open \(peer.name) to write to them")")
        case .message(let from, let seq, let text, let sentAt, let expiresAt):
            show(
                "message",
                ["from": .string(from), "seq": .int(Int(seq)), "text": .string(text), "sent_at": .int(Int(sentAt)),
                 "expires_at": expiresAt.map { .int(Int($0)) } ?? .null],
                in: from, text: screen == nil ? "\(from): \(text)" : "\(time(sentAt)) \(from): \(text)")
        case .delivered(let to, let seqs):
            if screen != nil {
                for seq in seqs { screen?.mark(seq: seq, in: to, state: "✓ delivered") }
            } else {
                for seq in seqs {
                    output.emit("delivered", ["to": .string(to), "seq": .int(Int(seq))], text: "  ✓ delivered to \(to) (#\(seq))")
                }
            }
        case .queued(let to, let seq, let text, let sentAt):
            if screen != nil {
                let online = await node.people().contains { $0.info.name == to && $0.connected }
                screen?.append("\(time(sentAt)) you: \(text)", to: to, counts: false, seq: seq)
                screen?.mark(seq: seq, in: to, state: online ? "sent" : "queued: delivered when \(to) is back")
            } else {
                output.emit("queued", ["to": .string(to), "seq": .int(Int(seq)), "text": .string(text)], text: "  … #\(seq) to \(to)")
            }
        case .lifetimeProposed(let by, let lifetime):
            show("lifetime_proposed", ["by": .string(by), "lifetime": .string(lifetime.description)], in: by,
                 text: "? \(by) proposes that messages \(lifetime == .never ? "are kept" : "disappear after \(lifetime)"): "
                    + "/lifetime \(lifetime) to agree, /lifetime reject to refuse")
        case .lifetimeChanged(let with, let lifetime):
            show("lifetime", ["peer": .string(with), "lifetime": .string(lifetime.description)], in: with, counts: false,
                 text: lifetime == .never ? "= messages with \(with) are kept" : "= messages with \(with) disappear after \(lifetime)")
        case .closed(let peer, let reason):
            show("closed", ["peer": .string(peer), "reason": .string(reason)], in: peer, counts: false,
                 text: "= \(peer): connection \(reason)")
        case .identityChanged(let name, let pinned, let presented):
            show("identity_changed", ["name": .string(name), "pinned": .string(pinned), "presented": .string(presented)], counts: false,
                 text: "! \(name) now presents identity \(presented), not \(pinned): refused. If they really changed devices, /trust \(name).")
        case .fileOffer(let from, let id, let name, let size):
            show("file_offer", ["from": .string(from), "id": .string(id), "name": .string(name), "size": .int(Int(size))], in: from,
                 text: "? \(from) offers \(name) (\(Self.bytes(size))): /accept file or /reject file")
        case .fileProgress(let peer, let id, let bytes, let total, let sending):
            let percent = total > 0 ? " (\(bytes * 100 / total)%)" : ""
            if screen != nil {
                transfers[id] = "\(sending ? "↑" : "↓") \(peer) \(Self.bytes(bytes))\(percent)"
            } else {
                output.emit(
                    "file_progress",
                    ["peer": .string(peer), "id": .string(id), "bytes": .int(Int(bytes)), "total": .int(Int(total)),
                     "direction": .string(sending ? "out" : "in")],
                    text: "  \(sending ? "→" : "←") \(peer): \(Self.bytes(bytes)) of \(Self.bytes(total))\(percent)")
            }
        case .fileReceived(let from, let id, let path, let sha256):
            transfers[id] = nil
            show("file_received", ["from": .string(from), "id": .string(id), "path": .string(path), "sha256": .string(sha256)], in: from,
                 text: "= received from \(from): \(path) (SHA-256 checked)")
        case .fileSent(let to, let id, let verified):
            transfers[id] = nil
            show("file_sent", ["to": .string(to), "id": .string(id), "verified": .bool(verified)], in: to, counts: false,
                 text: verified ? "= \(to) has the file (SHA-256 checked)" : "! \(to) received the file but its hash did not match")
        case .fileRefused(let by, let id):
            transfers[id] = nil
            show("file_refused", ["by": .string(by), "id": .string(id)], in: by, counts: false, text: "= \(by) refused the file")
        case .fileCancelled(let peer, let id, let byPeer):
            transfers[id] = nil
            show("file_cancelled", ["peer": .string(peer), "id": .string(id), "by_peer": .bool(byPeer)], in: peer, counts: false,
                 text: byPeer ? "= \(peer) stopped the file transfer" : "= file transfer with \(peer) cancelled")
        case .groupUpdated(let group, let members, let epoch):
            show("group", ["group": .string(group), "members": .string(members.joined(separator: ",")), "epoch": .int(Int(epoch))],
                 in: group, counts: false, text: "= group \(group): \(members.joined(separator: ", "))")
        case .groupMessage(let group, let from, let text, let sentAt, let expiresAt):
            show("group_message", ["group": .string(group), "from": .string(from), "text": .string(text), "sent_at": .int(Int(sentAt)),
                                   "expires_at": expiresAt.map { .int(Int($0)) } ?? .null],
                 in: group, text: screen == nil ? "[\(group)] \(from): \(text)" : "\(time(sentAt)) \(from): \(text)")
        case .groupLeft(let group, let removed):
            show("group_left", ["group": .string(group), "removed": .bool(removed)], in: group, counts: false,
                 text: removed ? "= you are no longer in \(group)" : "= you left \(group)")
        case .error(let message):
            error(message)
        }
        await redraw()
    }

    /// Sends to a person, or to a group of that name when no person has it.
    private func deliver(_ text: String, to name: String) async {
        if await node.isGroup(name), await !node.knows(name) {
            await node.sendToGroup(text, group: name)
            let now = UInt64(max(0, clock.wallClock.timeIntervalSince1970 * 1000))
            screen?.append("\(time(now)) you: \(text)", to: name, counts: false)
        } else {
            await node.send(text, to: name)
        }
    }

    static func bytes(_ count: UInt64) -> String {
        count < 1024 * 1024 ? "\((count + 1023) / 1024) KiB" : String(format: "%.1f MiB", Double(count) / 1_048_576)
    }

    private func fields(_ peer: NearbyPeerInfo) -> KeyValuePairs<String, JSONValue> {
        ["name": .string(peer.name), "fingerprint": .string(peer.fingerprint), "status": .string(peer.status.rawValue)]
    }

    static let help = """
        /connect NAME         ask NAME to talk            /accept [NAME] · /reject [NAME]
        /open NAME            write to NAME (or a group)  /msg NAME TEXT  one message
        /send PATH            send a file                 /accept file · /reject file · /cancel [ID]
        /verify [NAME]        show the safety number      /verified [NAME]  after comparing
        /lifetime 24h|7d|30d|never   disappearing messages (both agree) · /lifetime reject
        /group create NAME MEMBER…   /group add|remove NAME MEMBER   /group leave NAME
        /block NAME · /trust NAME    /peers · /history [NAME] · /quit
        Any other line goes to the open conversation (// starts a line with /).
        """

    // MARK: - Input

    /// Handles one input line; returns false to quit.
    func input(_ line: String) async -> Bool {
        guard !line.trimmingCharacters(in: .whitespaces).isEmpty else { return true }
        guard line.hasPrefix("/"), !line.hasPrefix("//") else {
            let text = line.hasPrefix("//") ? String(line.dropFirst()) : line
            guard let open else {
                error("no open conversation: /connect NAME, or /msg NAME text")
                return true
            }
            await deliver(text, to: open)
            return true
        }
        let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let argument = words.count > 1 ? words[1] : nil
        switch words[0] {
        case "/quit": return false
        case "/help":
            show("help", ["text": .string(Self.help)], counts: false, text: Self.help)
        case "/connect":
            guard let argument else { error("usage: /connect NAME"); break }
            await openConversation(argument)
            await node.connect(argument)
        case "/accept":
            if argument == "file" {
                await node.acceptFile(words.count > 2 ? words[2] : nil)
            } else if argument == nil, await !node.hasPendingRequest, await node.hasPendingOffer {
                await node.acceptFile(nil)
            } else {
                await node.accept(argument)
            }
        case "/reject":
            if argument == "file" {
                await node.rejectFile(words.count > 2 ? words[2] : nil)
            } else if argument == nil, await !node.hasPendingRequest, await node.hasPendingOffer {
                await node.rejectFile(nil)
            } else {
                await node.reject(argument)
            }
        case "/send":
            guard let open else { error("no open conversation: /open NAME first"); break }
            let path = line.drop(while: { $0 != " " }).drop(while: { $0 == " " })
            guard !path.isEmpty else { error("usage: /send PATH"); break }
            await node.sendFile(String(path), to: open)
        case "/cancel":
            await node.cancelFile(argument)
        case "/block":
            guard let argument else { error("usage: /block NAME"); break }
            await node.block(argument)
            show("blocked", ["name": .string(argument)], counts: false, text: "= \(argument) is blocked")
        case "/trust":
            guard let argument else { error("usage: /trust NAME"); break }
            await node.trust(argument)
        case "/open":
            guard let argument else { error("usage: /open NAME"); break }
            await openConversation(argument)
        case "/msg":
            guard words.count >= 3, let argument else { error("usage: /msg NAME text"); break }
            let text = line.drop(while: { $0 != " " }).dropFirst().drop(while: { $0 == " " })
                .drop(while: { $0 != " " }).dropFirst()
            await deliver(String(text), to: argument)
        case "/verify", "/verified":
            guard let name = argument ?? open, let number = await node.safetyNumber(with: name) else {
                error("no conversation to verify (/verify NAME)")
                break
            }
            if words[0] == "/verified" {
                await node.markVerified(name)
                show("verified", ["name": .string(name)], in: name, counts: false, text: "= \(name) is verified")
            } else if screen != nil {
                screen?.append("Safety number with \(name) (the same on both sides; compare it):\n\(number.grouped)", to: name, counts: false)
                if let code = qr(number.scannable) {
                    let width = code.split(separator: "\n").map { TerminalText.width(of: $0) }.max() ?? 0
                    if width + 2 <= screen?.conversationWidth ?? 0 {
                        screen?.append(code.hasSuffix("\n") ? String(code.dropLast()) : code, to: name, wraps: false, counts: false)
                    } else {
                        screen?.append("(widen the window to \(width + 2 + (screen?.peopleWidth ?? 0) + 1) columns to see it as a QR code)", to: name, counts: false)
                    }
                }
                screen?.append("After comparing: /verified \(name)", to: name, counts: false)
            } else {
                output.emit("safety_number", ["name": .string(name), "digits": .string(number.digits)],
                            text: "Safety number with \(name) (the same on both sides; compare it):\n\(number.grouped)\n"
                                + (qr(number.scannable) ?? "") + "After comparing: /verified \(name)")
            }
        case "/lifetime":
            guard let name = open else { error("no open conversation"); break }
            let groupNamed = await node.isGroup(name)
            let personNamed = await node.knows(name)
            let isGroup = groupNamed && !personNamed
            if argument == "reject", !isGroup {
                await node.rejectLifetime(from: name)
            } else if let value = argument.flatMap(NearbyLifetime.init(text:)) {
                if isGroup { await node.setGroupLifetime(value, group: name) } else { await node.setLifetime(value, for: name) }
            } else {
                error("usage: /lifetime 24h|7d|30d|never|reject")
            }
        case "/peers":
            for person in await node.people() {
                show(
                    "peer",
                    ["name": .string(person.info.name), "fingerprint": .string(person.info.fingerprint),
                     "status": .string(person.info.status.rawValue), "online": .bool(person.online), "connected": .bool(person.connected)],
                    counts: false,
                    text: "  \(person.info.name) (\(person.info.fingerprint), \(person.info.status.rawValue))\(person.connected ? " — connected" : person.online ? " — nearby" : " — away")")
            }
        case "/history":
            guard let name = argument ?? open else { error("usage: /history NAME"); break }
            for entry in await node.history(with: name) {
                show(
                    "history",
                    ["peer": .string(name), "from": .string(entry.from), "outgoing": .bool(entry.outgoing), "seq": .int(Int(entry.seq)),
                     "text": .string(entry.text)],
                    counts: false,
                    text: "\(entry.from): \(entry.text)")
            }
        case "/group":
            let rest = Array(words.dropFirst(2))
            switch (argument, rest.first) {
            case ("create", let name?) where rest.count >= 2:
                await node.createGroup(name, members: Array(rest.dropFirst()))
            case ("add", let name?) where rest.count == 2:
                await node.addToGroup(name, member: rest[1])
            case ("remove", let name?) where rest.count == 2:
                await node.removeFromGroup(name, member: rest[1])
            case ("leave", let name?) where rest.count == 1:
                await node.leaveGroup(name)
            default:
                error("usage: /group create NAME MEMBER…, /group add|remove NAME MEMBER, /group leave NAME")
            }
        default:
            error("unknown command \(words[0]) (/help lists them)")
        }
        return true
    }

    /// The QR code of `bytes` as text lines (nil in JSON mode).
    private func qr(_ bytes: [UInt8]) -> String? {
        guard !output.json, let code = try? QRCode.encode(bytes) else { return nil }
        return qrRenderer.render(code)
    }
}

/// The system clock with its wall-clock time shifted (the hidden `--clock-offset`).
struct OffsetClock: InvisoClock {
    let base = SystemClock()
    let offset: Duration

    var now: ClockInstant { base.now }
    var minimumResolution: Duration { base.minimumResolution }
    var wallClock: Date {
        base.wallClock.addingTimeInterval(Double(offset.components.seconds))
    }

    func sleep(until deadline: ClockInstant, tolerance: Duration?) async throws {
        try await base.sleep(until: deadline, tolerance: tolerance)
    }
}
