import Crypto
import Foundation
public import InvisoStore

/// An encrypted backup of the offline book: account and pre-keys, contacts with their
/// sessions, and the history, for `inviso offline export` / `import`.
///
/// ```
/// "IVOB" ‖ 0x01 ‖ logN ‖ r ‖ p ‖ salt (16) ‖ nonce (12) ‖ AES-256-GCM(JSON) ‖ tag (16)
///  └──────────── associated data (the 24-byte header) ───────────┘
/// key = scrypt(NFC(passphrase), salt, N = 2^logN, r, p, 32 bytes)
/// ```
///
/// A restored book continues the same Signal sessions: the copy it was exported from must
/// not be used again (two copies of one ratchet diverge, and the peer can read only one).
public enum OfflineBackup {
    static let magic = Array("IVOB".utf8)
    static let version: UInt8 = 1
    static let headerByteCount = 4 + 1 + 3 + 16

    /// Everything a backup holds.
    struct Contents: Codable {
        struct Contact: Codable {
            var id: String
            var createdAt: Int64
            var record: ContactRecord
        }

        struct Message: Codable {
            var id: String
            var contactID: String
            var storedAt: Int64
            var expiresAt: Int64?
            var record: MessageRecord
        }

        var account: AccountRecord
        var contacts: [Contact]
        var history: [Message]
    }

    /// Seals a book and its history under `passphrase`.
    ///
    /// - Parameters:
    ///   - book: The book.
    ///   - history: Its history messages.
    ///   - passphrase: The backup passphrase (not empty).
    ///   - parameters: scrypt's cost (``ScryptParameters/standard`` unless testing).
    ///   - generator: Randomness for the salt and nonce.
    /// - Throws: ``OfflineError/Code/wrongPassphrase`` for an empty passphrase,
    ///   ``OfflineError/Code/storage`` if encoding fails.
    public static func seal(
        _ book: OfflineBook, history: [OfflineMessage], passphrase: String, parameters: ScryptParameters = .standard,
        using generator: inout some RandomNumberGenerator
    ) throws(OfflineError) -> [UInt8] {
        var contents = Contents(
            account: AccountRecord(book.account),
            contacts: book.contacts.map { Contents.Contact(id: $0.id, createdAt: $0.createdAt, record: ContactRecord($0)) },
            history: history.map {
                Contents.Message(
                    id: $0.id, contactID: $0.contactID, storedAt: $0.storedAt, expiresAt: $0.expiresAt, record: MessageRecord($0))
            })
        defer { contents.wipe() }
        var plaintext = try RecordCoding.encode(contents)
        defer { plaintext.wipe() }
        let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let header =
            magic + [version, UInt8(parameters.logN), UInt8(parameters.blockSize), UInt8(parameters.parallelism)] + salt
        let key = try derive(passphrase, salt: salt, logN: parameters.logN, blockSize: parameters.blockSize, parallelism: parameters.parallelism)
        let nonceBytes = (0..<12).map { _ in UInt8.random(in: 0...255, using: &generator) }
        do {
            let box = try AES.GCM.seal(plaintext, using: key, nonce: try AES.GCM.Nonce(data: nonceBytes), authenticating: header)
            return header + nonceBytes + Array(box.ciphertext) + Array(box.tag)
        } catch {
            throw OfflineError(.storage, "sealing the backup")
        }
    }

    /// Opens a backup.
    ///
    /// - Returns: The book and its history.
    /// - Throws: ``OfflineError/Code/notABackup`` for another file or version (or scrypt
    ///   parameters beyond what this build runs), ``OfflineError/Code/wrongPassphrase`` when
    ///   it does not authenticate (wrong passphrase, or changed), ``OfflineError/Code/storage``
    ///   when its contents do not decode.
    public static func open(_ bytes: [UInt8], passphrase: String) throws(OfflineError) -> (book: OfflineBook, history: [OfflineMessage]) {
        guard bytes.count >= headerByteCount + 12 + 16, Array(bytes.prefix(4)) == magic else {
            throw OfflineError(.notABackup, "magic")
        }
        guard bytes[4] == version else { throw OfflineError(.notABackup, "version") }
        let logN = Int(bytes[5])
        let blockSize = Int(bytes[6])
        let parallelism = Int(bytes[7])
        // What the store accepts too: at most 2^20 × 8 × 128 bytes = 1 GiB would be far too
        // much; logN ≤ 20 with r ≤ 16 bounds it at 2 GiB only with both maxed, so r ≤ 8.
        guard (1...20).contains(logN), (1...8).contains(blockSize), (1...4).contains(parallelism) else {
            throw OfflineError(.notABackup, "scrypt parameters")
        }
        let header = Array(bytes[..<headerByteCount])
        let salt = Array(bytes[8..<headerByteCount])
        let key = try derive(passphrase, salt: salt, logN: logN, blockSize: blockSize, parallelism: parallelism)
        var plaintext: Data
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: bytes[headerByteCount..<(headerByteCount + 12)]),
                ciphertext: bytes[(headerByteCount + 12)..<(bytes.count - 16)], tag: bytes[(bytes.count - 16)...])
            plaintext = try AES.GCM.open(box, using: key, authenticating: header)
        } catch {
            throw OfflineError(.wrongPassphrase, "backup")
        }
        defer { plaintext.wipe() }
        var contents = try RecordCoding.decode(Contents.self, from: plaintext)
        defer { contents.wipe() }
        let account = try contents.account.account()
        let contacts = try contents.contacts.map { entry throws(OfflineError) in
            try entry.record.contact(id: entry.id, createdAt: entry.createdAt)
        }
        let ids = Set(contacts.map(\.id))
        let history = contents.history.filter { ids.contains($0.contactID) }.map {
            $0.record.message(id: $0.id, contactID: $0.contactID, storedAt: $0.storedAt, expiresAt: $0.expiresAt)
        }
        return (OfflineBook(account: account, contacts: contacts), history)
    }

    /// scrypt over the passphrase (InvisoStore's derivation, NFC-normalised UTF-8).
    private static func derive(
        _ passphrase: String, salt: [UInt8], logN: Int, blockSize: Int, parallelism: Int
    ) throws(OfflineError) -> SymmetricKey {
        guard !passphrase.isEmpty else { throw OfflineError(.wrongPassphrase, "empty passphrase") }
        let parameters = ScryptParameters(logN: logN, blockSize: blockSize, parallelism: parallelism)
        guard let key = parameters.deriveKey(from: passphrase, salt: salt) else {
            throw OfflineError(.notABackup, "scrypt parameters")
        }
        return key
    }
}

extension OfflineBackup.Contents {
    mutating func wipe() {
        account.wipe()
        for index in contacts.indices { contacts[index].record.wipe() }
    }
}

extension OfflineStore {
    /// Restores a backup into this store, which must have no account.
    ///
    /// - Throws: ``OfflineError/Code/accountExists``, or ``StoreError``.
    public func restore(_ book: OfflineBook, history: [OfflineMessage]) throws {
        try transaction { rows throws(OfflineError) in
            guard rows.account == nil else { throw OfflineError(.accountExists, "restore") }
            return (try Self.write(book, replacing: rows, messages: history), ())
        }
    }
}
