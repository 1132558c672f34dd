import ArgumentParser
import Foundation
import InvisoKit
import InvisoCrypto
import InvisoStore

/// `inviso call NAME`: a new chat with a saved contact, no invite needed.
struct CallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "call",
        abstract: "Start a new chat with a saved contact (no invite needed).",
        discussion: """
            Both sides derive this five-minute window's code and words from the secret they \
            share since they saved each other (/save in a verified chat), so neither types \
            anything: the contact answers with `inviso call YOURNAME` or a waiting `inviso \
            listen`. The pairing succeeds only with the contact's own identity key. A clock a \
            few minutes off still meets: the neighbouring windows are tried too.
            """)

    @Argument(help: "The contact's name (inviso contacts lists them).")
    var name: String

    @OptionGroup var options: ChatOptions
    @OptionGroup var text: TextStyleOptions

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let (store, book) = try options.openContactBook(environment: environment)
        guard let contact = try book.named(name) else {
            throw CLIError("no contact called \(name) (inviso contacts lists them; /save NAME in a verified chat adds one)")
        }
        let configuration = Self.configuration(
            try options.configuration(environment: environment), identity: try book.identity(), contact: contact)
        let session = ChatSession(options: options, configuration: configuration, store: store, environment: environment)
        let secret = contact.secret
        let label = TerminalText.sanitized(contact.name)
        let start: @Sendable (ChatClient) async throws -> ChatSession.Start = { client in
            try await Self.meet(client, secret: secret, at: Date(), label: label)
        }
        try await session.run(display: text.display, peerName: contact.name, start: start)
    }

    /// Joins the contact's room of this window or a neighbouring one; otherwise creates
    /// this window's and waits (a taken code means the contact created it meanwhile: join).
    /// In each window the slots are tried in order: a used one (an earlier call's room)
    /// leads to the next, a missing one ends that window's search.
    static func meet(_ client: ChatClient, secret: SecretBytes, at date: Date, label: String) async throws -> ChatSession.Start {
        let window: Int64 = ContactCall.window(at: date)
        let windows: [Int64] = [window, window - 1, window + 1]
        // This window's first slot with no room: ours is created there (every probe of a
        // used or missing code counts against the address's failed attempts).
        var free = 0
        for candidate in windows {
            slots: for slot in 0..<ContactCall.slotsPerWindow {
                switch try await Self.tryJoin(client, ContactCall.invite(secret: secret, window: candidate, slot: slot)) {
                case .joined: return .joined
                case .used: if candidate == window { free = slot + 1 }
                case .absent: break slots
                }
            }
        }
        if try await Self.createOrJoin(client, secret: secret, window: window, from: free) { return .joined }
        return .waiting("calling " + label + "… (they answer with inviso call, or a running inviso listen)")
    }

    /// `base` set up for a call to `contact`: our identity, the contact's key pinned, and a
    /// room that lives long enough for the neighbouring window's caller to find it.
    static func configuration(
        _ base: ChatClient.Configuration, identity: SecretBytes, contact: Contact
    ) -> ChatClient.Configuration {
        var configuration = base
        configuration.contactCall = (identity: identity, peer: contact.identity)
        configuration.inviteExpiry = .seconds(Int(ContactCall.windowSeconds) * 2)
        if configuration.name.isEmpty { configuration.name = contact.name }
        return configuration
    }

    /// Creates the room of `window`'s first free slot (from `first`) and returns `false` (waiting); when a
    /// slot's code is taken and its room waits — the contact created it first — joins it
    /// and returns `true`. A taken code whose room was entered (an earlier call) moves on.
    ///
    /// - Throws: ``ChatError/alreadyUsed`` when every slot of the window is used.
    static func createOrJoin(_ client: ChatClient, secret: SecretBytes, window: Int64, from first: Int = 0) async throws -> Bool {
        for slot in first..<ContactCall.slotsPerWindow {
            let invite = ContactCall.invite(secret: secret, window: window, slot: slot)
            // Taken: the contact's room waiting (joined) or an earlier call's (the next
            // slot); gone meanwhile (the contact stopped): this slot again, so that no gap
            // stops the contact's next search before our room.
            attempts: for _ in 0..<3 {
                do throws(ChatError) {
                    _ = try await client.invite(fixed: invite)
                    return false
                } catch {
                    guard error.code == ChatError.Code.alreadyUsed else { throw error }
                }
                switch try await Self.tryJoin(client, invite) {
                case .joined: return true
                case .used: break attempts
                case .absent: continue
                }
            }
        }
        throw ChatError(.alreadyUsed, "every call of this window is used; try again in five minutes")
    }

    /// What joining a call's room gave.
    enum Door: Equatable {
        /// In: the room waited for us.
        case joined
        /// Someone entered it already (an earlier call of this window).
        case used
        /// There is none (not created yet, or expired).
        case absent
    }

    /// Joins `invite`'s room.
    static func tryJoin(_ client: ChatClient, _ invite: Invite) async throws -> Door {
        do throws(ChatError) {
            try await client.join(invite.text)
            return .joined
        } catch {
            if error.code == ChatError.Code.expired { return .absent }
            if error.code == ChatError.Code.alreadyUsed { return .used }
            throw error
        }
    }
}


/// `inviso listen`: waits for any saved contact to call.
struct ListenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listen",
        abstract: "Wait for a call from any saved contact, then chat.",
        discussion: """
            Opens this window's room for every contact (at most ten: the server keeps twenty \
            live codes per address) and renews them every five minutes; the first contact who \
            calls (inviso call) gets the chat, the other rooms are closed.
            """)

    @OptionGroup var options: ChatOptions
    @OptionGroup var text: TextStyleOptions

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let (store, book) = try options.openContactBook(environment: environment)
        let contacts = Array(try book.all().prefix(10))
        guard !contacts.isEmpty else { throw CLIError("no contacts yet: /save NAME in a verified chat adds one") }
        let identity = try book.identity()
        let base = try options.configuration(environment: environment)
        let mode = ChatSession.mode(options)
        if mode == .script {
            JSONLines.emitLine(JSONLines.object(["event": .string("listening"), "contacts": .int(contacts.count)]))
        } else {
            let names: [String] = contacts.map { TerminalText.sanitized($0.name) }
            FileHandle.standardOutput.write(Data(("waiting for a call from " + names.joined(separator: ", ") + "…\n").utf8))
        }
        while true {
            let window = ContactCall.window(at: Date())
            var waiting: [(Contact, ChatClient)] = []
            for contact in contacts {
                let client = ChatClient(
                    configuration: CallCommand.configuration(base, identity: identity, contact: contact), store: store,
                    logger: ChatSession.logger(mode: mode, environment: environment))
                do {
                    // A taken code whose room waits: they are calling right now, and this answers.
                    _ = try await CallCommand.createOrJoin(client, secret: contact.secret, window: window)
                    waiting.append((contact, client))
                } catch {
                    FileHandle.standardError.write(Data(("warning: " + contact.name + ": " + String(describing: error) + "\n").utf8))
                }
            }
            // The first room someone entered wins; the rest close at once.
            var answered: Int?
            while answered == nil, ContactCall.window(at: Date()) == window {
                for index in waiting.indices {
                    let state: ChatState = await waiting[index].1.state
                    if state != .pending {
                        answered = index
                        break
                    }
                }
                if answered == nil { try await Task.sleep(for: .milliseconds(100)) }
            }
            for index in waiting.indices where index != answered {
                let other: ChatClient = waiting[index].1
                let id: String? = await other.sessionID
                await other.leave()
                if let id { _ = try? store.deleteSession(id: id) }
            }
            guard let answered else { continue }
            let (contact, client) = waiting[answered]
            let session = ChatSession(options: options, client: client, store: store, server: base.server, mode: mode)
            let label = TerminalText.sanitized(contact.name)
            try await session.run(display: text.display, peerName: contact.name) { _ in
                .waiting("\(label) is calling…")
            }
            return
        }
    }
}

/// `inviso contacts`: lists, renames, deletes and verifies saved contacts.
struct ContactsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contacts",
        abstract: "List, rename, delete or verify saved contacts.",
        discussion: """
            A contact is saved with /save NAME in a verified chat, by both sides. Then \
            `inviso call NAME` starts a new chat with them, no invite needed.
            """,
        subcommands: [List.self, Rename.self, Delete.self, Verify.self],
        defaultSubcommand: List.self)

    struct Storage: ParsableArguments {
        @Option(help: "Data directory (default: the per-user Inviso data directory).")
        var data: String?

        func book() throws -> ContactBook {
            var options = ChatOptions()
            options.data = data
            return try options.openContactBook(environment: ProcessInfo.processInfo.environment).book
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the contacts.")
        @OptionGroup var storage: Storage
        @Flag(help: "One JSON object.") var json = false

        func run() throws {
            let contacts = try storage.book().all()
            if json {
                // One object per contact.
                for contact in contacts {
                    JSONLines.emitLine(JSONLines.object([
                        "name": .string(contact.name), "fingerprint": .string(contact.fingerprint),
                        "verified": .bool(contact.verified),
                    ]))
                }
                return
            }
            if contacts.isEmpty { print("no contacts yet: /save NAME in a verified chat adds one") }
            for contact in contacts {
                let status: String = contact.verified ? "verified" : "saved from a verified invite"
                let name: String = TerminalText.sanitized(contact.name)
                print(name + "  " + contact.fingerprint + "  " + status)
            }
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rename", abstract: "Rename a contact.")
        @OptionGroup var storage: Storage
        @Argument var name: String
        @Argument(help: "The new name.") var newName: String

        func run() throws {
            let book = try storage.book()
            guard var contact = try book.named(name) else { throw CLIError("no contact called \(name)") }
            guard !newName.isEmpty, newName.count <= 64 else { throw CLIError("a name has 1 to 64 characters") }
            if let other = try book.named(newName), other.identity != contact.identity { throw CLIError("\(newName) is taken") }
            contact.name = newName
            try book.save(contact)
            print("renamed to \(TerminalText.sanitized(newName))")
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a contact (its secret is gone: no more calls).")
        @OptionGroup var storage: Storage
        @Argument var name: String
        @Flag(help: "Do not ask.") var yes = false

        func run() throws {
            let book = try storage.book()
            guard let contact = try book.named(name) else { throw CLIError("no contact called \(name)") }
            if !yes {
                print("delete \(TerminalText.sanitized(contact.name)) (\(contact.fingerprint))? [y/N] ", terminator: "")
                guard readLine()?.lowercased().hasPrefix("y") == true else { throw CLIError("not deleted") }
            }
            try book.delete(contact)
            print("deleted")
        }
    }

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify", abstract: "Record that you compared a contact's safety number (in a chat: /verify).")
        @OptionGroup var storage: Storage
        @Argument var name: String

        func run() throws {
            let book = try storage.book()
            guard var contact = try book.named(name) else { throw CLIError("no contact called \(name)") }
            contact.verified = true
            try book.save(contact)
            print("\(TerminalText.sanitized(contact.name)) marked verified")
        }
    }
}

extension ChatOptions {
    /// The store (which contacts need: an ephemeral chat keeps none) and its contact book.
    func openContactBook(environment: [String: String]) throws -> (store: InvisoStore, book: ContactBook) {
        guard let store = try openStore(environment: environment) else { throw CLIError("no store") }
        return (store, ContactBook(store: store))
    }
}
