import ArgumentParser
import Foundation
import InvisoOffline
import InvisoStore

/// `inviso offline`: Signal-encrypted messages carried by any messenger, readable by the
/// SecureChats and KryptEY keyboards (`docs/offline.md`).
struct OfflineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offline",
        abstract: "Signal-encrypted messages you carry in any messenger (SecureChats/KryptEY compatible).",
        discussion: """
            No server: you paste what `invite` and `seal` print into any messenger, and \
            whoever you send it to pastes it into `open` (or into the SecureChats keyboard). \
            The account, contacts, sessions and history live in their own encrypted store \
            under the data directory (offline/), opened with INVISO_PASSPHRASE or a key file.
            """,
        subcommands: [
            OfflineInit.self, OfflineInvite.self, OfflineOpen.self, OfflineSeal.self, OfflineContacts.self,
            OfflineHistory.self, OfflineExport.self, OfflineImport.self, OfflineReset.self,
        ]
    )
}

/// The options every `inviso offline` command takes.
struct OfflineOptions: ParsableArguments {
    @Option(help: "Data directory (default: the per-user Inviso data directory); the account is in its offline/ folder.")
    var data: String?

    @Flag(help: "Print one JSON object per line instead of text.")
    var json = false

    /// The time to act at, in milliseconds since 1970 (tests; default: now).
    @Option(name: .customLong("now"), help: .hidden)
    var nowOverride: Int64?

    /// The offline store's directory.
    var directory: URL { DataDirectory.url(data).appendingPathComponent(OfflineStore.directoryName) }

    /// Now, in milliseconds since 1970: read here, in the shell, and passed down.
    var now: Int64 { nowOverride ?? Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// Whether a store exists (without creating one).
    var storeExists: Bool {
        FileManager.default.fileExists(atPath: directory.appendingPathComponent(InvisoStore.databaseFileName).path)
    }

    /// Opens the store (creating it only when `create`), with its expired history removed.
    ///
    /// - Throws: ``CLIError`` saying why it does not open, or that there is no account.
    func openStore(create: Bool = false, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> OfflineStore {
        guard create || storeExists else { throw CLIError(OfflineError.Code.noAccount.explanation) }
        do {
            let store = try OfflineStore(directory: directory, keySource: .fromEnvironment(environment))
            try store.deleteExpired(now: now)
            return store
        } catch {
            throw CLIError(SessionStoreOptions.explain(error, directory: directory, environment: environment))
        }
    }

    /// Runs `body`, turning its errors into one sentence: `{"event":"error","error":…}` with
    /// `--json`, else `Error: …` on standard error; exit status 1.
    func run(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch {
            let message = Self.explain(error)
            if json {
                JSONLines.emit(["event": .string("error"), "error": .string(message)])
                throw ExitCode.failure
            }
            throw CLIError(message)
        }
    }

    /// Prints the outcome of a command that has nothing else to show: a sentence, or with
    /// `--json` `{"event":EVENT,"result":…}`.
    func report(event: String, _ text: String) {
        if json {
            JSONLines.emit(["event": .string(event), "result": .string(text)])
        } else {
            print(text.prefix(1).uppercased() + text.dropFirst() + ".")
        }
    }

    /// A sentence for any error an offline command meets.
    static func explain(_ error: any Error) -> String {
        switch error {
        case let error as OfflineError:
            return error.code == .storage && !error.context.isEmpty
                ? "\(error.code.explanation) (\(error.context))" : error.code.explanation
        case let error as StoreError: return "the offline store failed: \(error)"
        default: return String(describing: error)
        }
    }
}
