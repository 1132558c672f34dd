import ArgumentParser
import Foundation
import InvisoStore

/// The `--data` and `--json` options of the commands that read the chat store, and how they
/// open it.
struct SessionStoreOptions: ParsableArguments {
    @Option(help: "Data directory (default: the per-user Inviso data directory).")
    var data: String?

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    /// The data directory.
    var directory: URL { DataDirectory.url(data) }

    /// Opens the store in ``directory`` with the master key from the environment
    /// (`INVISO_PASSPHRASE`, else the key file), or returns `nil` when no store exists there —
    /// so listing an empty directory creates nothing, not even a key.
    ///
    /// - Throws: ``CLIError`` with a secret-free explanation when the store does not open.
    func openStore(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> InvisoStore? {
        let database = directory.appendingPathComponent(InvisoStore.databaseFileName)
        guard FileManager.default.fileExists(atPath: database.path) else { return nil }
        do {
            return try InvisoStore(directory: directory, keySource: .fromEnvironment(environment))
        } catch {
            throw CLIError(Self.explain(error, directory: directory, environment: environment))
        }
    }

    /// Opens the store, failing when there is none.
    func openExistingStore(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> InvisoStore {
        guard let store = try openStore(environment: environment) else {
            throw CLIError("no Inviso store in \(directory.path)")
        }
        return store
    }

    /// A user-facing explanation of why the store in `directory` did not open.
    static func explain(_ error: StoreError, directory: URL, environment: [String: String]) -> String {
        let variable = MasterKeySource.passphraseVariable
        let usesPassphrase = environment[variable] != nil
        switch error.code {
        case .wrongPassphrase:
            return "\(variable) does not open the store in \(directory.path)"
        case .emptyPassphrase:
            return "\(variable) is set but empty"
        case .keySourceMismatch:
            return usesPassphrase
                ? "the store in \(directory.path) uses a key file, not a passphrase: unset \(variable)"
                : "the store in \(directory.path) is protected by a passphrase: set \(variable)"
        case .wrongKey:
            return "the key file does not open the store in \(directory.path)"
        case .keyFileMissing:
            return "the store in \(directory.path) has lost its key file (\(InvisoStore.keyFileName))"
        case .insecureKeyFile:
            return
                "the key file is readable by others: run chmod 600 \(directory.appendingPathComponent(InvisoStore.keyFileName).path)"
        case .invalidKeyFile:
            return "the key file \(directory.appendingPathComponent(InvisoStore.keyFileName).path) is not a valid key"
        default:
            return "could not open the store in \(directory.path): \(error)"
        }
    }

    /// Runs `body` and prints its result: as one JSON line with `--json`, else as text. A
    /// failure prints `{"error":…}` with `--json` (else `Error: …` on standard error) and
    /// exits with status 1.
    func run(_ body: () async throws -> SessionCommandOutput) async throws {
        do {
            let output = try await body()
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                JSONLines.emitLine(String(decoding: try encoder.encode(output.json), as: UTF8.self))
            } else {
                print(output.text, terminator: output.text.hasSuffix("\n") || output.text.isEmpty ? "" : "\n")
            }
        } catch {
            guard json else { throw error }
            JSONLines.emit(["error": .string(String(describing: error))])
            throw ExitCode.failure
        }
    }
}
