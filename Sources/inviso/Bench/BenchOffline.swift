import ArgumentParser
import Foundation
import InvisoOffline
import InvisoSignal

/// `inviso bench offline`: SecureChats-style offline messages (seal, encode, find in the
/// paste, open) per encoding, beside the Double Ratchet send+receive they wrap, measured in
/// the same run; and PQXDH invite → first message setups beside the bare Signal setup.
struct BenchOffline: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offline",
        abstract: "Benchmark offline messages per encoding against the Double Ratchet they wrap.",
        discussion: """
            message: a 100-byte message sealed by one offline book, encoded (raw, base64 or \
            fairytale, Android form), read back by the paste reader and opened by the other \
            book — beside the baseline, SessionCipher encrypt + parse + decrypt of the same \
            message through in-memory stores (the ceiling: everything else is the offline \
            layer's cost). setup: an invite written, encoded raw, read and opened (the \
            session built, Kyber included), a first message sealed, read and opened (its \
            header authenticated, then decrypted) — beside a PQXDH session setup + first \
            message through in-memory stores. Targets: raw ≥ 0.5, fairytale ≥ 0.25 of the \
            ratchet. Use -c release.
            """
    )

    @OptionGroup var options: BenchOptions

    func run() throws {
        #if DEBUG
        FileHandle.standardError.write(Data("warning: debug build; use `swift run -c release inviso bench offline`\n".utf8))
        #endif
        let report = options.report
        report.header()
        for encoding in [OfflineEncoding.raw, .base64, .fairytale] {
            let name = "offline message 100B \(encoding.rawValue) (seal+open)"
            if options.selected(name) { report.emit(try messages(name: name, encoding: encoding)) }
        }
        let setupName = "offline PQXDH invite → first message"
        if options.selected(setupName) { report.emit(try setups(name: setupName)) }
    }

    private func messages(name: String, encoding: OfflineEncoding) throws -> BenchResult {
        let books = try BookPair.talking()
        let plaintext = String(repeating: "a", count: 100)
        let ours = BenchOperation(workPerCall: 1) { count in
            do {
                for _ in 0..<count { consume(try books.send(plaintext, encoding: encoding)) }
            } catch {
                fatalError("offline message failed in the benchmark: \(error)")
            }
        }
        let pair = try SessionPair.established()
        let bytes = Array(plaintext.utf8)
        let baseline = BenchOperation(workPerCall: 1) { count in
            for _ in 0..<count { consume(pair.roundTrip(bytes)) }
        }
        let rates = options.compare(ours: ours, baseline: baseline)
        return BenchResult(name: name, value: rates.ours, unit: "messages/s", baseline: rates.baseline, ratio: rates.ratio)
    }

    private func setups(name: String) throws -> BenchResult {
        var generator = SystemRandomNumberGenerator()
        let alice = try OfflineBook.create(now: BookPair.start, using: &generator)
        let bob = try OfflineBook.create(now: BookPair.start, using: &generator)
        let ours = BenchOperation(workPerCall: 1) { count in
            do {
                for _ in 0..<count {
                    var alice = alice
                    var bob = bob
                    let invite = try alice.invite(now: BookPair.start, using: &generator)
                    let inviteText = OfflineEncoding.raw.encode(invite, cover: "")
                    _ = try bob.open(try PasteReader.read(inviteText).envelope, as: "alice", now: BookPair.start, using: &generator)
                    let first = try bob.seal("hello", to: "alice", now: BookPair.start + 1, using: &generator)
                    let firstText = OfflineEncoding.raw.encode(first.envelope, cover: "")
                    let opened = try alice.open(try PasteReader.read(firstText).envelope, as: "bob", now: BookPair.start + 2, using: &generator)
                    if case .message(let message, _, _) = opened { consume(UInt8(message.text.utf8.count)) }
                }
            } catch {
                fatalError("offline setup failed in the benchmark: \(error)")
            }
        }
        let fixture = try SetupFixture(kyber: true)
        let plaintext = Array("hello".utf8)
        let baseline = BenchOperation(workPerCall: 1) { count in
            do {
                for _ in 0..<count { consume(try fixture.runOnce(plaintext)) }
            } catch {
                fatalError("Signal setup failed in the benchmark: \(error)")
            }
        }
        let rates = options.compare(ours: ours, baseline: baseline)
        return BenchResult(name: name, value: rates.ours, unit: "setups/s", baseline: rates.baseline, ratio: rates.ratio)
    }
}

/// Two offline books with a session both ways, carried between batches.
private final class BookPair {
    static let start: Int64 = 1_795_743_453_000
    var alice: OfflineBook
    var bob: OfflineBook
    var generator = SystemRandomNumberGenerator()
    var now = start + 10

    private init(alice: OfflineBook, bob: OfflineBook) {
        self.alice = alice
        self.bob = bob
    }

    static func talking() throws -> BookPair {
        var generator = SystemRandomNumberGenerator()
        var alice = try OfflineBook.create(now: start, using: &generator)
        var bob = try OfflineBook.create(now: start, using: &generator)
        _ = try bob.open(try alice.invite(now: start, using: &generator), as: "alice", now: start, using: &generator)
        _ = try alice.open(try bob.seal("hi", to: "alice", now: start, using: &generator).envelope, as: "bob", now: start, using: &generator)
        _ = try bob.open(try alice.seal("hi", to: "bob", now: start, using: &generator).envelope, now: start, using: &generator)
        return BookPair(alice: alice, bob: bob)
    }

    /// Alice seals `text` for Bob in `encoding`; Bob reads the paste and opens it.
    func send(_ text: String, encoding: OfflineEncoding) throws -> UInt8 {
        now += 1
        let sealed = try alice.seal(text, to: "bob", now: now, using: &generator)
        let pasted = encoding.encode(sealed.envelope, form: .android, using: &generator)
        let opened = try bob.open(try PasteReader.read(pasted).envelope, now: now, using: &generator)
        guard case .message(let message, _, _) = opened else { fatalError("not a message") }
        return UInt8(truncatingIfNeeded: message.text.utf8.count)
    }
}
