import ArgumentParser
import Foundation
import InvisoOffline
import InvisoSignal
import InvisoStore

/// `inviso offline contacts`.
struct OfflineContacts: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contacts",
        abstract: "List, show, rename, delete, verify or trust contacts; set how long messages are kept.",
        discussion: """
            contacts [list]              every contact
            contacts show NAME           address, session, and the safety number to compare
            contacts rename OLD NEW
            contacts delete NAME         the contact, its session and its history
            contacts verify NAME         mark the safety number as compared
            contacts trust NAME          accept a changed identity key (then open the text again)
            contacts lifetime NAME 1h|6h|1d|7d|30d|off
            """)

    @OptionGroup var options: OfflineOptions

    @Argument(help: "list, show, rename, delete, verify, trust or lifetime, then its arguments.")
    var words: [String] = []

    func run() throws {
        try options.run {
            let action = words.first ?? "list"
            let arguments = Array(words.dropFirst())
            func argument(_ index: Int, _ name: String) throws -> String {
                guard index < arguments.count else { throw CLIError("contacts \(action) needs \(name)") }
                return arguments[index]
            }
            let store = try options.openStore()
            defer { store.close() }
            switch action {
            case "list":
                let book = try store.load()
                if options.json {
                    for contact in book.contacts { emit(contact) }
                } else if book.contacts.isEmpty {
                    print("No contacts yet: open someone's invite with `inviso offline open`.")
                } else {
                    for contact in book.contacts {
                        let flags = [contact.verified ? "verified" : "not verified", contact.sessionVersion == 4 ? "PQXDH" : "X3DH"]
                            + (contact.pendingIdentityKey != nil ? ["KEY CHANGED: trust or delete"] : [])
                            + (contact.lifetime.map { ["messages kept \(Self.duration($0))"] } ?? [])
                        print("\(TerminalText.sanitized(contact.name))  \(contact.address)  (\(flags.joined(separator: ", ")))")
                    }
                }
            case "show", "verify":
                let name = try argument(0, "a NAME")
                let book = try store.update { book, _ throws(OfflineError) in
                    if action == "verify" { try book.verify(name) }
                    return book
                }
                guard let contact = book.contact(named: name) else { throw OfflineError(.contactNotFound, "contact") }
                let number = try book.safetyNumber(for: name).displayable.digits
                if options.json {
                    emit(contact, safetyNumber: number)
                } else {
                    print("\(TerminalText.sanitized(contact.name)): \(contact.address), device \(contact.deviceID)")
                    print("Safety number:")
                    print(SafetyNumberText.grouped(number))
                    print(
                        action == "verify"
                            ? "Marked verified. (If their number differs, delete the contact: someone is in between.)"
                            : (contact.verified ? "Verified." : "Not verified: compare the number with them, then `inviso offline contacts verify \(contact.name)`."))
                }
            case "rename":
                let (old, new) = (try argument(0, "OLD and NEW names"), try argument(1, "a NEW name"))
                try store.update { book, _ throws(OfflineError) in try book.rename(old, to: new) }
                options.report(event: "done", "renamed \(old) to \(new)")
            case "delete":
                let name = try argument(0, "a NAME")
                try store.update { book, _ throws(OfflineError) in _ = try book.delete(name) }
                options.report(event: "done", "deleted \(name), its session and its history")
            case "trust":
                let name = try argument(0, "a NAME")
                let changed = try store.update { book, _ throws(OfflineError) in try book.trust(name) }
                options.report(
                    event: "done",
                    changed
                        ? "now trusting \(name)'s new key: open their text again, and compare the new safety number"
                        : "\(name)'s key has not changed: nothing to trust")
            case "lifetime":
                let name = try argument(0, "a NAME")
                let value = try argument(1, "a lifetime (1h, 6h, 1d, 7d, 30d or off)")
                let lifetime = try Self.lifetime(value)
                try store.update { book, _ throws(OfflineError) in try book.setLifetime(lifetime, for: name) }
                options.report(
                    event: "done",
                    lifetime.map { "messages with \(name) are now deleted after \(Self.duration($0))" } ?? "messages with \(name) are kept")
            default:
                throw CLIError("unknown contacts action \(action): use list, show, rename, delete, verify, trust or lifetime")
            }
        }
    }

    private func emit(_ contact: OfflineContact, safetyNumber: String? = nil) {
        JSONLines.emit([
            "event": .string("contact"), "name": .string(contact.name), "address": .string(contact.address),
            "verified": .bool(contact.verified), "keyChanged": .bool(contact.pendingIdentityKey != nil),
            "session": .string(contact.sessionVersion == 4 ? "PQXDH" : "X3DH"),
            "lifetime": contact.lifetime.map { .int(Int($0 / 1000)) } ?? .null,
            "safetyNumber": safetyNumber.map { .string($0) } ?? .null,
        ])
    }

    /// A lifetime in milliseconds (`nil` for off).
    static func lifetime(_ text: String) throws -> Int64? {
        let table: [String: Int64] = ["1h": 1, "6h": 6, "1d": 24, "7d": 7 * 24, "30d": 30 * 24]
        if text == "off" { return nil }
        guard let hours = table[text] else { throw CLIError("lifetime must be 1h, 6h, 1d, 7d, 30d or off") }
        return hours * 3_600_000
    }

    static func duration(_ milliseconds: Int64) -> String {
        let hours = milliseconds / 3_600_000
        return hours % 24 == 0 ? "\(hours / 24) day\(hours == 24 ? "" : "s")" : "\(hours) hour\(hours == 1 ? "" : "s")"
    }
}

/// `inviso offline history`.
struct OfflineHistory: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history", abstract: "Print the messages sent to and received from a contact.")

    @OptionGroup var options: OfflineOptions

    @Argument(help: "The contact.")
    var name: String

    func run() throws {
        try options.run {
            let store = try options.openStore()
            defer { store.close() }
            guard let contact = try store.load().contact(named: name) else { throw OfflineError(.contactNotFound, "contact") }
            let messages = try store.history(contactID: contact.id, now: options.now)
            for message in messages {
                if options.json {
                    JSONLines.emit([
                        "event": .string("message"), "from": .string(message.direction == .sent ? "me" : contact.name),
                        "to": .string(message.direction == .sent ? contact.name : "me"), "text": .string(message.text),
                        "timestamp": .int(Int(message.sentAt)), "kind": .string(message.kind.rawValue),
                    ])
                } else {
                    let who = message.direction == .sent ? "me → \(contact.name)" : contact.name
                    print("\(OfflineTime.text(message.sentAt)) \(TerminalText.sanitized(who)): \(TerminalText.sanitized(message.text))")
                }
            }
            if messages.isEmpty, !options.json { print("No messages with \(contact.name).") }
        }
    }
}

/// `inviso offline export`.
struct OfflineExport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write an encrypted backup of the account, contacts, sessions and history.",
        discussion: """
            The backup's passphrase comes from INVISO_BACKUP_PASSPHRASE, or is asked for. \
            After importing it elsewhere, stop using this copy: two copies of one Signal \
            session diverge.
            """)

    @OptionGroup var options: OfflineOptions

    @Argument(help: "The backup file to write (not overwritten if it exists).")
    var file: String

    func run() throws {
        try options.run {
            let url = URL(fileURLWithPath: file)
            guard !FileManager.default.fileExists(atPath: url.path) else { throw CLIError("\(file) exists: choose another name") }
            let passphrase = try BackupPassphrase.read(confirm: true)
            let store = try options.openStore()
            defer { store.close() }
            var generator = SystemRandomNumberGenerator()
            let bytes = try OfflineBackup.seal(
                try store.load(), history: try store.history(contactID: nil, now: options.now), passphrase: passphrase,
                using: &generator)
            guard FileManager.default.createFile(atPath: url.path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]) else {
                throw CLIError("could not write \(file)")
            }
            if options.json {
                JSONLines.emit(["event": .string("exported"), "file": .string(url.path), "bytes": .int(bytes.count)])
            } else {
                print("Wrote \(url.path) (\(bytes.count) bytes, encrypted with your backup passphrase).")
                print("After importing it on another machine, do not use this one for offline messages any more.")
            }
        }
    }
}

/// `inviso offline import`.
struct OfflineImport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Restore an encrypted backup into an empty offline store.")

    @OptionGroup var options: OfflineOptions

    @Argument(help: "The backup file.")
    var file: String

    func run() throws {
        try options.run {
            guard let data = FileManager.default.contents(atPath: file) else { throw CLIError("cannot read \(file)") }
            let passphrase = try BackupPassphrase.read(confirm: false)
            let (book, history) = try OfflineBackup.open(Array(data), passphrase: passphrase)
            let store = try options.openStore(create: true)
            defer { store.close() }
            try store.restore(book, history: history)
            if options.json {
                JSONLines.emit([
                    "event": .string("imported"), "address": .string(book.account.address), "contacts": .int(book.contacts.count),
                    "messages": .int(history.count),
                ])
            } else {
                print("Restored your offline account (\(book.contacts.count) contacts, \(history.count) messages).")
                print(
                    "Important: do not use the copy you exported from any more — two copies of one Signal session diverge, "
                        + "and your contacts could read only one of them. Run `inviso offline reset` there.")
            }
        }
    }
}

/// `inviso offline reset`.
struct OfflineReset: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset", abstract: "Erase the offline account, contacts, sessions, history and key.")

    @OptionGroup var options: OfflineOptions

    @Flag(help: "Erase without asking.")
    var yes = false

    func run() throws {
        try options.run {
            guard options.storeExists else {
                options.report(event: "reset", "nothing to erase in \(options.directory.path)")
                return
            }
            if !yes {
                guard OfflineIO.interactive,
                    OfflineIO.ask("Erase your offline account and every contact and message? Type yes: ")?.lowercased() == "yes"
                else { throw CLIError("not erased: run again with --yes to erase without asking") }
            }
            do {
                try InvisoStore.eraseAll(in: options.directory)
            } catch {
                throw CLIError("could not erase \(options.directory.path): \(error)")
            }
            options.report(event: "reset", "erased the offline account in \(options.directory.path)")
        }
    }
}

/// The backup passphrase: `INVISO_BACKUP_PASSPHRASE`, or asked on the terminal.
enum BackupPassphrase {
    static let variable = "INVISO_BACKUP_PASSPHRASE"

    static func read(confirm: Bool, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        if let value = environment[variable] {
            guard !value.isEmpty else { throw CLIError("\(variable) is set but empty") }
            return value
        }
        guard let first = OfflineIO.passphrase("Backup passphrase: ") else {
            throw CLIError("no terminal to ask for the backup passphrase: set \(variable)")
        }
        guard !first.isEmpty else { throw CLIError("the backup passphrase must not be empty") }
        if confirm {
            guard OfflineIO.passphrase("Again: ") == first else { throw CLIError("the two passphrases differ") }
        }
        return first
    }
}
