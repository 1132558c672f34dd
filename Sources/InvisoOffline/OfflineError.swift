/// Why an `InvisoOffline` operation failed.
///
/// A ``Code`` and a short fixed context for logs and messages. Never plaintext, key
/// material or the pasted text itself: a paste may be someone else's secret.
public struct OfflineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: Sendable, Hashable {
            case malformedEnvelope, tooLarge, notCompressed, noMessage, hiddenTextStripped, hiddenTextDamaged
            case noAccount, accountExists, notAnEnvelope, ownMessage, unknownSender, nameNeeded, identityChanged
            case alreadyRead, notForUs, invalidKeys, noSession, contactNotFound, contactExists, messageTooLong
            case wrongPassphrase, notABackup, storage
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The text is not an envelope of either form: not JSON, a field of the wrong type,
        /// a required field missing, base64 that does not decode.
        public static let malformedEnvelope = Code(.malformedEnvelope)
        /// The input is larger than any envelope can be.
        public static let tooLarge = Code(.tooLarge)
        /// Data that should be a raw DEFLATE stream is not one.
        public static let notCompressed = Code(.notCompressed)
        /// Nothing in the paste decodes: no JSON, no base64, no hidden run.
        public static let noMessage = Code(.noMessage)
        /// A Fairy Tale run lost its U+200E/U+200F characters (some apps strip them).
        public static let hiddenTextStripped = Code(.hiddenTextStripped)
        /// A Fairy Tale run is there but does not decode (cut off or changed on the way).
        public static let hiddenTextDamaged = Code(.hiddenTextDamaged)
        /// The store has no account yet.
        public static let noAccount = Code(.noAccount)
        /// The store already has an account.
        public static let accountExists = Code(.accountExists)
        /// An envelope with neither keys nor a ciphertext.
        public static let notAnEnvelope = Code(.notAnEnvelope)
        /// The envelope claims our own address: our own invite or message, or a forgery.
        public static let ownMessage = Code(.ownMessage)
        /// A message from an address that is not a contact.
        public static let unknownSender = Code(.unknownSender)
        /// A known contact's identity key changed; refused until the user trusts it.
        public static let identityChanged = Code(.identityChanged)
        /// A replayed message: it was already decrypted.
        public static let alreadyRead = Code(.alreadyRead)
        /// The ciphertext does not decrypt: tampered with, for another account, or from a session we no longer have.
        public static let notForUs = Code(.notForUs)
        /// An invite's keys are malformed or their signatures do not verify.
        public static let invalidKeys = Code(.invalidKeys)
        /// No contact has that name.
        public static let contactNotFound = Code(.contactNotFound)
        /// A contact already has that name, or that address.
        public static let contactExists = Code(.contactExists)
        /// The plaintext exceeds the apps' 10,000-byte limit.
        public static let messageTooLong = Code(.messageTooLong)
        /// A backup's passphrase (or the backup itself) does not authenticate.
        public static let wrongPassphrase = Code(.wrongPassphrase)
        /// A file is not an offline backup of a version we read.
        public static let notABackup = Code(.notABackup)
        /// A new contact needs a name and none was given.
        public static let nameNeeded = Code(.nameNeeded)
        /// A contact without a session to send on.
        public static let noSession = Code(.noSession)
        /// The encrypted store failed (the context names the operation).
        public static let storage = Code(.storage)

        /// The code's name.
        public var description: String {
            switch base {
            case .malformedEnvelope: "malformedEnvelope"
            case .tooLarge: "tooLarge"
            case .notCompressed: "notCompressed"
            case .noMessage: "noMessage"
            case .hiddenTextStripped: "hiddenTextStripped"
            case .hiddenTextDamaged: "hiddenTextDamaged"
            case .noAccount: "noAccount"
            case .accountExists: "accountExists"
            case .notAnEnvelope: "notAnEnvelope"
            case .ownMessage: "ownMessage"
            case .unknownSender: "unknownSender"
            case .identityChanged: "identityChanged"
            case .alreadyRead: "alreadyRead"
            case .notForUs: "notForUs"
            case .invalidKeys: "invalidKeys"
            case .contactNotFound: "contactNotFound"
            case .contactExists: "contactExists"
            case .messageTooLong: "messageTooLong"
            case .wrongPassphrase: "wrongPassphrase"
            case .notABackup: "notABackup"
            case .nameNeeded: "nameNeeded"
            case .noSession: "noSession"
            case .storage: "storage"
            }
        }

        /// A sentence for the user: what happened and what to do.
        public var explanation: String {
            switch base {
            case .malformedEnvelope: "that text is not a SecureChats message (its JSON is malformed)"
            case .tooLarge: "that text is larger than any message can be"
            case .notCompressed: "the hidden text does not decompress"
            case .noMessage: "no hidden message: the app you copied from may remove invisible characters — ask the sender for base64"
            case .hiddenTextStripped: "the hidden message lost characters: the app you copied from removes direction marks (U+200E/U+200F) — ask the sender for base64"
            case .hiddenTextDamaged: "the hidden message is damaged or cut off — ask the sender to send it again, as base64"
            case .noAccount: "no offline account here yet: run `inviso offline init`"
            case .accountExists: "this store already has an offline account"
            case .notAnEnvelope: "that envelope holds no keys and no message"
            case .ownMessage: "that is your own invite or message"
            case .unknownSender: "that message is from someone who is not in your contacts: open their invite first, or open it again with --as NAME"
            case .identityChanged: "this contact's safety number has changed: compare it with them, then run `inviso offline contacts trust NAME` and open the text again"
            case .alreadyRead: "this message was already read"
            case .notForUs: "this message cannot be decrypted: it was changed on the way, or it is for another account or an older session"
            case .invalidKeys: "the invite's keys are invalid (malformed or wrongly signed)"
            case .contactNotFound: "no contact has that name"
            case .contactExists: "a contact with that name already exists"
            case .messageTooLong: "the message is longer than 10,000 bytes, the most SecureChats reads"
            case .wrongPassphrase: "wrong passphrase, or the backup file was changed"
            case .notABackup: "that file is not an Inviso offline backup"
            case .nameNeeded: "this is someone new: open it again with --as NAME to add them to your contacts"
            case .noSession: "there is no session with this contact: open an invite or a message from them first"
            case .storage: "the local store failed"
            }
        }
    }

    /// What went wrong.
    public let code: Code
    /// A fixed text naming where (a field name, a step); never input data.
    public let context: String

    /// An error with a code and a fixed context.
    public init(_ code: Code, _ context: String = "") {
        self.code = code
        self.context = context
    }

    /// `code` or `code: context`.
    public var description: String { context.isEmpty ? code.description : "\(code): \(context)" }

    /// Errors compare by code.
    public static func == (lhs: OfflineError, rhs: OfflineError) -> Bool { lhs.code == rhs.code }
    /// Hashes the code.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// ``Code/malformedEnvelope`` with a context.
    static func malformed(_ context: String) -> OfflineError { OfflineError(.malformedEnvelope, context) }
}
