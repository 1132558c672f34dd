internal import InvisoFuzzSupport
internal import InvisoCrypto
internal import InvisoOffline
internal import InvisoSignal
internal import InvisoTesting

/// `inviso offline open` end to end under the fuzzer (docs/fuzzing.md). Each input is used
/// twice:
/// - as a paste, read by detection and every decoder, and opened when it reads;
/// - as a patch of a real text: byte 0 picks one of the texts Bob (and a stranger) wrote to
///   Alice, bytes 1–2 an offset, the rest is XORed into its UTF-8 there; the result is
///   pasted and opened into Alice's book, which has a live PQXDH session with Bob — so
///   mutations of authentic messages reach decryption.
///
/// The book and the texts are made once per process: Kyber encapsulation draws from the
/// system's generator, so a corpus file could not carry a text that a later process's book
/// can read — the patch form carries an index instead.
enum OpenFuzzTarget {
    static let start: Int64 = 1_795_743_453_000

    /// Alice's book (she knows Bob, with a live session) and texts Bob wrote to her: built
    /// once from a fixed seed, so every run sees the same keys.
    static let world: (alice: OfflineBook, texts: [String]) = {
        var generator = SeededGenerator(seed: 0x0FF1_1AE)
        var alice = try! OfflineBook.create(now: start, using: &generator)
        var bob = try! OfflineBook.create(now: start, using: &generator)
        var carol = try! OfflineBook.create(now: start, using: &generator)
        let invite = try! alice.invite(now: start, using: &generator)
        _ = try! bob.open(invite, as: "alice", now: start, using: &generator)
        _ = try! carol.open(invite, as: "alice", now: start, using: &generator)
        let first = try! bob.seal("first", to: "alice", now: start + 1, using: &generator)
        _ = try! alice.open(first.envelope, as: "bob", now: start + 2, using: &generator)
        // Texts Alice has not opened yet: a pre-key message, an ordinary one after her
        // answer, one from a stranger with her invite, a stranger's invite, a rotation.
        let preKey = try! bob.seal("second", to: "alice", now: start + 3, using: &generator).envelope
        let answer = try! alice.seal("answer", to: "bob", now: start + 4, using: &generator).envelope
        _ = try! bob.open(answer, now: start + 5, using: &generator)
        let ordinary = try! bob.seal("third", to: "alice", now: start + 6, using: &generator).envelope
        let stranger = try! carol.seal("hello from carol", to: "alice", now: start + 7, using: &generator).envelope
        let strangerInvite = try! carol.invite(now: start + 8, using: &generator)
        let rotation = try! bob.seal("rotated", to: "alice", now: start + 3 * 24 * 3_600_000, using: &generator).envelope
        var texts: [String] = []
        for envelope in [preKey, ordinary, stranger, strangerInvite, rotation, first.envelope] {
            for form in OfflineEnvelope.Form.allCases {
                for encoding in OfflineEncoding.allCases {
                    texts.append(encoding.encode(envelope, form: form, cover: "Once upon a time."))
                }
            }
        }
        texts += ["> " + OfflineEncoding.base64.encode(ordinary, cover: ""), "hello", ""]
        return (alice, texts)
    }()

    /// Everything an operation may change in the book.
    struct Snapshot: Equatable {
        let generations: [UInt32]
        let invitesWritten: UInt32
        let contacts: [String]
        let sessions: [[UInt8]]

        init(_ book: OfflineBook, ignoringPendingKeys: Bool = false) {
            generations = book.account.generations.map(\.number)
            invitesWritten = book.account.invitesWritten
            contacts = book.contacts.map { contact in
                let pending = ignoringPendingKeys ? "" : "\(contact.pendingIdentityKey?.serialized ?? [])"
                return "\(contact.id) \(contact.name) \(contact.address) \(contact.identityKey.serialized) \(pending) \(contact.knownGeneration)"
            }
            sessions = book.contacts.map { $0.session.serialize().withUnsafeBytes { Array($0) } }
        }
    }

    /// Opens `bytes` as a paste, and as a patch of one of the world's texts.
    static func run(_ bytes: [UInt8]) {
        open(String(decoding: bytes, as: UTF8.self), seed: UInt64(bytes.count))
        guard !bytes.isEmpty else { return }
        var text = Array(world.texts[Int(bytes[0]) % world.texts.count].utf8)
        guard !text.isEmpty else { return }
        let offset = bytes.count >= 3 ? Int(UInt16(bytes[1]) << 8 | UInt16(bytes[2])) % text.count : 0
        for (index, byte) in bytes.dropFirst(3).enumerated() where offset + index < text.count {
            text[offset + index] ^= byte
        }
        open(String(decoding: text, as: UTF8.self), seed: UInt64(bytes.count) &+ 1)
    }

    /// Inputs that patch nothing: each of the world's texts as it is.
    static var seeds: [[UInt8]] { world.texts.indices.map { [UInt8($0), 0, 0] } }

    /// Reads `text` as a paste and opens what it finds into a copy of Alice's book.
    static func open(_ text: String, seed: UInt64) {
        guard let found = try? PasteReader.read(text) else { return }
        // What reads writes back in its encoding and form, and reads as the same envelope.
        let again = mustSucceed("re-reading a \(found.encoding) \(found.form) text we wrote") { () throws(OfflineError) in
            try PasteReader.read(found.encoding.encode(found.envelope, form: found.form, cover: "Once."))
        }
        invariant(again.envelope == found.envelope, "re-encoding changed the envelope")

        var book = world.alice
        var generator = SeededGenerator(seed: seed)
        let now = start + 10
        do {
            let opened = try book.open(found.envelope, as: "fuzz", now: now, using: &generator)
            if case .message = opened {
                // A message reads once.
                var replayed = book
                let snapshot = Snapshot(replayed)
                do {
                    _ = try replayed.open(found.envelope, as: "fuzz", now: now, using: &generator)
                    invariant(false, "a message read twice")
                } catch {
                    invariant(Snapshot(replayed) == snapshot, "a refused replay changed the book")
                }
            }
        } catch {
            // Refused: nothing changed, but a changed identity key is remembered.
            let ignore = error.code == .identityChanged
            invariant(
                Snapshot(book, ignoringPendingKeys: ignore) == Snapshot(world.alice, ignoringPendingKeys: ignore),
                "a refused open (\(error.code)) changed the book")
        }
    }
}
