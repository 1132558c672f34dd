public import InvisoSignal

/// The offline messenger's state and rules: the account, the contacts with their Signal
/// sessions, and what opening or sealing a text does to them. A value, with no I/O: the
/// caller loads it, runs one operation, and stores it (``OfflineStore`` does both).
///
/// ```
///            invite()                      open(invite, as:)
///  account ───────────► PreKeyResponse ───────────────────────► contact + session (Alice)
///
///  open(envelope):  notOurs ──► refused            claims our address ──► refused
///                   invite  ──► add / refresh contact (identity changed ──► refused, pending)
///                   message ──► contact by (address, device) ──► decrypt ──► history
///                               unknown + pre-key message + a name ──► new contact first
///                   rotation ─► contact ──► process their new bundle ──► decrypt ──► history
///
///  seal(text, to:): encrypt ──► message, or rotation when our keys are newer than theirs
/// ```
///
/// Every operation either succeeds or leaves the book exactly as it was — with one
/// deliberate exception: a changed identity key is remembered as the contact's
/// ``OfflineContact/pendingIdentityKey`` so that ``trust(_:)`` can accept it. Time is
/// passed in; randomness comes from the caller's generator.
public struct OfflineBook: Sendable {
    /// The most plaintext a message may carry: SecureChats caps it at 10,000 bytes.
    public static let maxPlaintextByteCount = 10_000
    /// Fingerprint iterations, as SecureChats computes safety numbers.
    public static let fingerprintIterations = 5200

    /// The account.
    public internal(set) var account: OfflineAccount
    /// The contacts, in the order they were added.
    public internal(set) var contacts: [OfflineContact]

    /// A book from its parts (read back from storage).
    public init(account: OfflineAccount, contacts: [OfflineContact]) {
        self.account = account
        self.contacts = contacts
    }

    /// A new book with a new account and no contacts.
    ///
    /// - Throws: ``OfflineError/Code/storage`` if key generation fails.
    public static func create(now: Int64, using generator: inout some RandomNumberGenerator) throws(OfflineError) -> OfflineBook {
        OfflineBook(account: try OfflineAccount.create(now: now, using: &generator), contacts: [])
    }

    /// The contact called `name` (names compare case-insensitively).
    public func contact(named name: String) -> OfflineContact? {
        contacts.first { Self.sameName($0.name, name) }
    }

    /// The index of the contact at `address` and `deviceID` (addresses compare
    /// case-insensitively: the apps write UUIDs in either case).
    func contactIndex(address: String, deviceID: UInt32) -> Int? {
        contacts.firstIndex { $0.deviceID == deviceID && Self.sameAddress($0.address, address) }
    }

    func contactIndex(named name: String) throws(OfflineError) -> Int {
        guard let index = contacts.firstIndex(where: { Self.sameName($0.name, name) }) else {
            throw OfflineError(.contactNotFound, "contact")
        }
        return index
    }

    /// Rotates the account's pre-keys when they are due (see ``OfflineAccount/rotate(now:using:)``).
    ///
    /// - Returns: Whether anything changed.
    @discardableResult
    public mutating func rotate(now: Int64, using generator: inout some RandomNumberGenerator) throws(OfflineError) -> Bool {
        try account.rotate(now: now, using: &generator)
    }

    /// Whether two contact names are the same, ignoring case.
    static func sameName(_ a: String, _ b: String) -> Bool {
        sameAddress(a, b) || a.lowercased() == b.lowercased()
    }

    /// Whether two addresses are the same, ignoring ASCII case (the apps write UUIDs in
    /// either case); compares bytes, without making lower-case copies.
    static func sameAddress(_ a: String, _ b: String) -> Bool {
        var a = a
        var b = b
        return a.withUTF8 { left in
            b.withUTF8 { right in
                guard left.count == right.count else { return false }
                for index in left.indices where left[index] != right[index] {
                    let x = left[index] | 0x20
                    guard x == right[index] | 0x20, (0x61...0x7A).contains(x) else { return false }
                }
                return true
            }
        }
    }

    // MARK: - Invite

    /// An invite: our current keys, no ciphertext.
    public mutating func invite(now: Int64, using generator: inout some RandomNumberGenerator) throws(OfflineError) -> OfflineEnvelope {
        try account.rotate(now: now, using: &generator)
        return OfflineEnvelope(
            ciphertext: nil, ciphertextType: OfflineEnvelope.CiphertextType.none, deviceID: Int(OfflineAccount.deviceID),
            preKeyResponse: account.preKeyResponse(), address: account.address, timestamp: now)
    }

    // MARK: - Contacts

    /// Sets the name the user gives themselves (`nil` clears it).
    ///
    /// - Throws: ``OfflineError/Code/nameNeeded`` for an unusable name.
    public mutating func setOwnName(_ name: String?) throws(OfflineError) {
        account.name = try name.map { name throws(OfflineError) in try Self.validName(name) }
    }

    /// Renames a contact.
    ///
    /// - Throws: ``OfflineError/Code/contactNotFound``; ``OfflineError/Code/contactExists``
    ///   when another contact has the new name.
    public mutating func rename(_ name: String, to newName: String) throws(OfflineError) {
        let index = try contactIndex(named: name)
        let taken = contacts.indices.contains { $0 != index && Self.sameName(contacts[$0].name, newName) }
        guard !taken else { throw OfflineError(.contactExists, "rename") }
        contacts[index].name = try Self.validName(newName)
    }

    /// Deletes a contact and its session. (Its history is the store's to delete.)
    ///
    /// - Returns: The deleted contact.
    @discardableResult
    public mutating func delete(_ name: String) throws(OfflineError) -> OfflineContact {
        contacts.remove(at: try contactIndex(named: name))
    }

    /// Marks a contact verified (the user compared safety numbers).
    public mutating func verify(_ name: String) throws(OfflineError) {
        contacts[try contactIndex(named: name)].verified = true
    }

    /// Accepts a contact's new identity key (the one refused last), which ends the old
    /// session; the contact is no longer verified.
    ///
    /// - Returns: Whether there was a new key to accept.
    @discardableResult
    public mutating func trust(_ name: String) throws(OfflineError) -> Bool {
        let index = try contactIndex(named: name)
        guard let pending = contacts[index].pendingIdentityKey else { return false }
        contacts[index].identityKey = pending
        contacts[index].pendingIdentityKey = nil
        contacts[index].verified = false
        contacts[index].session.archiveCurrentState()
        return true
    }

    /// Sets how long messages with a contact are kept (`nil`: for ever).
    public mutating func setLifetime(_ lifetime: Int64?, for name: String) throws(OfflineError) {
        if let lifetime, lifetime <= 0 { throw OfflineError(.storage, "lifetime must be positive") }
        contacts[try contactIndex(named: name)].lifetime = lifetime
    }

    /// The safety number with a contact as SecureChats shows it: libsignal's numeric
    /// fingerprint, version 2, 5200 iterations, the two address strings (UTF-8) as stable
    /// ids — 60 digits, the same on both sides.
    public func safetyNumber(for name: String) throws(OfflineError) -> Fingerprint {
        let contact = contacts[try contactIndex(named: name)]
        do {
            return try Fingerprint(
                version: 2, iterations: Self.fingerprintIterations, localStableID: Array(account.address.utf8),
                localIdentity: account.identity.identityKey, remoteStableID: Array(contact.address.utf8),
                remoteIdentity: contact.identityKey)
        } catch {
            throw OfflineError(.storage, "fingerprint")
        }
    }

    /// `name` without surrounding whitespace, when it is usable as a contact name (1…64
    /// characters, no control, format or line characters).
    static func validName(_ name: String) throws(OfflineError) -> String {
        let scalars = name.unicodeScalars.drop { $0.properties.isWhitespace }.reversed().drop { $0.properties.isWhitespace }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars.reversed())
        let trimmed = String(view)
        guard !trimmed.isEmpty, trimmed.count <= 64,
            !trimmed.unicodeScalars.contains(where: {
                [.control, .format, .lineSeparator, .paragraphSeparator].contains($0.properties.generalCategory)
            })
        else {
            throw OfflineError(.nameNeeded, "a name of 1 to 64 characters without control characters")
        }
        return trimmed
    }
}

// MARK: - CustomStringConvertible

extension OfflineBook: CustomStringConvertible {
    /// The account's address and the number of contacts; never a key.
    public var description: String { "OfflineBook(\(account.address), \(contacts.count) contacts)" }
}
