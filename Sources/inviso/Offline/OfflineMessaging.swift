import ArgumentParser
import Foundation
import InvisoOffline
import InvisoSignal

/// `inviso offline init`.
struct OfflineInit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init", abstract: "Create your offline account (a Signal identity and pre-keys).")

    @OptionGroup var options: OfflineOptions

    @Option(help: "A name for yourself, shown with your invites.")
    var name: String?

    func run() throws {
        try options.run {
            let store = try options.openStore(create: true)
            defer { store.close() }
            var generator = SystemRandomNumberGenerator()
            let book = try store.create(now: options.now, using: &generator)
            if let name {
                try store.update { book, _ throws(OfflineError) in try book.setOwnName(name) }
            }
            if options.json {
                JSONLines.emit([
                    "event": .string("account"), "address": .string(book.account.address),
                    "name": name.map { .string($0) } ?? .null,
                ])
            } else {
                print("Created your offline account in \(options.directory.path).")
                print("Your address: \(book.account.address)")
                print("Next: run `inviso offline invite` and send what it prints to someone you want to write to.")
            }
        }
    }
}

/// The `--encoding`, `--format` and `--copy` options of the commands that write a text.
struct OfflineWriteOptions: ParsableArguments {
    /// `--encoding`'s values.
    enum EncodingArgument: String, ExpressibleByArgument, CaseIterable {
        case fairytale, base64, raw
        var encoding: OfflineEncoding { OfflineEncoding(rawValue: rawValue)! }
    }

    /// `--format`'s values.
    enum FormArgument: String, ExpressibleByArgument, CaseIterable {
        case android, ios
        var form: OfflineEnvelope.Form { OfflineEnvelope.Form(rawValue: rawValue)! }
    }

    @Option(name: .customLong("encoding"), help: "How the text looks: fairytale (a sentence hiding the message, the apps' default), base64 or raw.")
    var encodingArgument: EncodingArgument = .fairytale

    @Option(name: .customLong("format"), help: "The JSON form: android (SecureChats for Android, KryptEY) or ios (SecureChats for iOS).")
    var formArgument: FormArgument = .android

    var encoding: OfflineEncoding { encodingArgument.encoding }
    var format: OfflineEnvelope.Form { formArgument.form }

    @Flag(help: "Put the text on the clipboard instead of printing it.")
    var copy = false

    /// Prints or copies `envelope` as text, with a size warning when messengers may cut it.
    func deliver(_ envelope: OfflineEnvelope, event: String, options: OfflineOptions) throws {
        var generator = SystemRandomNumberGenerator()
        let text = encoding.encode(envelope, form: format, using: &generator)
        let bytes = text.utf8.count
        if copy { try Clipboard.copy(text, environment: ProcessInfo.processInfo.environment) }
        var warning: String?
        if bytes > OfflineWriteOptions.threemaLimit {
            let alternatives = OfflineEncoding.allCases.filter { $0 != encoding }.map {
                ($0, $0.encode(envelope, form: format, cover: FairyTale.coverSentences[0]).utf8.count)
            }.filter { $0.1 < bytes }.sorted { $0.1 < $1.1 }
            warning =
                "this is \(bytes) bytes: some messengers cut long texts (Threema at 3,500)"
                + (alternatives.first.map { "; --encoding \($0.0) makes \($0.1) bytes" } ?? "")
        }
        if options.json {
            JSONLines.emit([
                "event": .string(event), "text": copy ? .null : .string(text), "encoding": .string(encoding.rawValue),
                "format": .string(format.rawValue), "bytes": .int(bytes), "warning": warning.map { .string($0) } ?? .null,
            ])
            return
        }
        if copy {
            OfflineIO.note("Copied to the clipboard (\(encoding.rawValue), \(bytes) bytes).")
        } else {
            print(text)
            if encoding == .fairytale, isatty(STDOUT_FILENO) == 1 {
                OfflineIO.note(
                    "(The message is hidden in invisible characters after the sentence: copy the whole line, or use --copy; "
                        + "--encoding base64 survives any copy.)")
            }
        }
        if let warning { OfflineIO.note("Warning: \(warning).") }
    }

    /// Threema's limit on a message, the smallest of the common messengers'.
    static let threemaLimit = 3_500
}


/// `inviso offline invite`.
struct OfflineInvite: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invite",
        abstract: "Print an invite: your keys, for someone to add you and write to you.",
        discussion: """
            Send it to one or more people through any messenger. Opening it (`inviso offline \
            open`, or the SecureChats keyboard) adds you as a contact. Invites carry your \
            current pre-keys, which rotate every 2 days; an invite keeps working for 2 more.
            """)

    @OptionGroup var options: OfflineOptions
    @OptionGroup var output: OfflineWriteOptions

    @Flag(help: "Leave out the Kyber pre-key: an X3DH-only invite, as KryptEY writes (PQXDH otherwise).")
    var noKyber = false

    func run() throws {
        try options.run {
            let store = try options.openStore()
            defer { store.close() }
            var generator = SystemRandomNumberGenerator()
            var envelope = try store.update { book, _ throws(OfflineError) in try book.invite(now: options.now, using: &generator) }
            if noKyber {
                envelope.preKeyResponse?.kyberPreKeyID = nil
                envelope.preKeyResponse?.kyberPublicKey = nil
                envelope.preKeyResponse?.kyberSignature = nil
            }
            try output.deliver(envelope, event: "invite", options: options)
        }
    }
}

/// `inviso offline open`.
struct OfflineOpen: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract: "Read a pasted invite or message (any encoding, either app's form).",
        discussion: """
            TEXT is what was pasted to you; without it (or with -) it is read from standard \
            input. Text around the message, broken lines, quoted replies and the marks some \
            apps add are dealt with; what was repaired is said.
            """)

    @OptionGroup var options: OfflineOptions

    @Argument(help: "The pasted text (default: standard input).")
    var text: String?

    @Option(name: .customLong("as"), help: "The name for someone new (from their invite or first message).")
    var name: String?

    @Flag(help: "Read the text from the clipboard.")
    var paste = false

    func run() throws {
        try options.run {
            let pasted = try OfflineIO.text(argument: text, paste: paste)
            let found = try PasteReader.read(pasted)
            let store = try options.openStore()
            defer { store.close() }
            for repair in found.repairs {
                if options.json {
                    JSONLines.emit(["event": .string("repair"), "repair": .string(repair.description)])
                } else {
                    OfflineIO.note("(\(repair.description))")
                }
            }
            let canAsk = OfflineIO.interactive && !options.json && (paste || (text != nil && text != "-"))
            var name = self.name
            while true {
                do {
                    try open(found, as: name, store: store)
                    return
                } catch let error as OfflineError where [.nameNeeded, .unknownSender].contains(error.code) && name == nil && canAsk {
                    guard found.envelope.kind == .invite || error.code == .unknownSender,
                        let answer = OfflineIO.ask("Someone new (\(found.envelope.address)). Name them: "),
                        !answer.trimmingSpaces().isEmpty
                    else { throw error }
                    name = answer.trimmingSpaces()
                }
            }
        }
    }

    private func open(_ found: PasteReader.Found, as name: String?, store: OfflineStore) throws {
        var generator = SystemRandomNumberGenerator()
        let now = options.now
        let (opened, book) = try store.update { book, history throws(OfflineError) in
            let opened = try book.open(found.envelope, as: name, now: now, using: &generator)
            if case .message(let message, _, _) = opened { history.append(message) }
            return (opened, book)
        }
        switch opened {
        case .invite(let contact, let added):
            let session = contact.sessionVersion == 4 ? "PQXDH" : "X3DH"
            if options.json {
                JSONLines.emit([
                    "event": .string("contact"), "name": .string(contact.name), "address": .string(contact.address),
                    "verified": .bool(contact.verified), "added": .bool(added), "session": .string(session),
                ])
            } else {
                print(added ? "Added \(contact.name) to your contacts (\(session))." : "Updated \(contact.name)'s keys (\(session)).")
                if let number = try? book.safetyNumber(for: contact.name) {
                    print("Safety number (compare it with \(contact.name), then run `inviso offline contacts verify \(contact.name)`):")
                    print(SafetyNumberText.grouped(number.displayable.digits))
                }
                print("Write to them: inviso offline seal --to \(contact.name) \"…\"")
            }
        case .message(let message, let contact, let added):
            if options.json {
                JSONLines.emit([
                    "event": .string("message"), "from": .string(contact.name), "text": .string(message.text),
                    "timestamp": .int(Int(message.sentAt)), "kind": .string(message.kind.rawValue),
                ])
            } else {
                if added { OfflineIO.note("(added \(contact.name) to your contacts: compare safety numbers with `inviso offline contacts show \(contact.name)`)") }
                if message.kind == .rotation { OfflineIO.note("(\(contact.name)'s keys rotated; updated)") }
                print("\(OfflineTime.text(message.sentAt)) \(contact.name): \(TerminalText.sanitized(message.text))")
            }
        }
    }
}

/// `inviso offline seal`.
struct OfflineSeal: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seal",
        abstract: "Encrypt a message for a contact and print the text to send.",
        discussion: "TEXT is the message (at most 10,000 bytes); without it (or with -) it is read from standard input.")

    @OptionGroup var options: OfflineOptions
    @OptionGroup var output: OfflineWriteOptions

    @Option(help: "The contact to write to.")
    var to: String

    @Argument(help: "The message (default: standard input).")
    var text: String?

    func run() throws {
        try options.run {
            var message = try OfflineIO.text(argument: text, paste: false)
            if text == nil || text == "-", message.hasSuffix("\n") { message.removeLast() }
            guard !message.isEmpty else { throw CLIError("nothing to send: the message is empty") }
            let store = try options.openStore()
            defer { store.close() }
            var generator = SystemRandomNumberGenerator()
            let now = options.now
            let sealed = try store.update { book, history throws(OfflineError) in
                let sealed = try book.seal(message, to: to, now: now, using: &generator)
                history.append(sealed.message)
                return sealed
            }
            if sealed.envelope.kind == .rotation, !options.json {
                OfflineIO.note("(your keys rotated: this message carries the new ones)")
            }
            try output.deliver(sealed.envelope, event: "sealed", options: options)
        }
    }
}

/// Times as the offline commands print them.
enum OfflineTime {
    /// `yyyy-MM-dd HH:mm` in local time.
    static func text(_ milliseconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}
