import Foundation
import InvisoCrypto
import Testing

@testable import InvisoOffline

/// The three encodings against `Resources/offline-vectors.json` ("encodings": each envelope
/// in both forms), built by `scripts/vectors/offline_vectors.py` from the format
/// description with Python's zlib, base64 and its own tables; and reading them back from
/// pastes as apps mangle them.
@Suite("SecureChats encodings")
struct EncodingTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let name: String
        let form: OfflineEnvelope.Form
        let cover: String
        let raw: String
        let base64: String
        let fairyTale: String
        let payload: [UInt8]
        let firstByte: Int
        let envelope: OfflineEnvelope
        var testDescription: String { name }
    }

    static let vectors: [Vector] = {
        let items = OfflineVectorFile.section("encodings")
        let envelopes = Dictionary(uniqueKeysWithValues: EnvelopeTests.vectors.map { ($0.name, $0.envelope) })
        return items.compactMap { item in
            guard let name = item["name"] as? String, let form = (item["form"] as? String).flatMap(OfflineEnvelope.Form.init),
                let cover = item["cover"] as? String, let raw = item["raw"] as? String, let base64 = item["base64"] as? String,
                let fairyTale = item["fairytale"] as? String, let payload = (item["payload"] as? String).flatMap(Hex.decode),
                let firstByte = item["firstByte"] as? Int, let envelope = envelopes[name]
            else { return nil }
            return Vector(
                name: name, form: form, cover: cover, raw: raw, base64: base64, fairyTale: fairyTale, payload: payload,
                firstByte: firstByte, envelope: envelope)
        }
    }()

    @Test("the vectors: every envelope in both forms; Android streams whose first byte needs the empty block and ones that do not")
    func vectorFile() {
        #expect(Self.vectors.count == 18)
        #expect(Set(Self.vectors.map(\.name)).count == 9)
        let android = Self.vectors.filter { $0.form == .android }
        #expect(android.contains { !(0x01...0x7F).contains($0.firstByte) })
        #expect(android.contains { (0x01...0x7F).contains($0.firstByte) })
        #expect(Self.vectors.contains { $0.form == .ios })
    }

    @Test("we write exactly the vector's raw, base64 and Fairy Tale texts", arguments: vectors)
    func writes(_ vector: Vector) {
        let envelope = vector.envelope
        #expect(OfflineEncoding.raw.encode(envelope, form: vector.form, cover: vector.cover) == vector.raw)
        #expect(OfflineEncoding.base64.encode(envelope, form: vector.form, cover: vector.cover) == vector.base64)
        #expect(FairyTale.compress(Array(vector.raw.utf8), form: vector.form) == vector.payload)
        let fairyTale = OfflineEncoding.fairytale.encode(envelope, form: vector.form, cover: vector.cover)
        #expect(fairyTale == vector.fairyTale)
        #expect(Array(fairyTale.unicodeScalars) == Array(vector.fairyTale.unicodeScalars))
    }

    @Test("each vector text reads back as its envelope, form and encoding, with nothing repaired", arguments: vectors)
    func reads(_ vector: Vector) throws {
        for (text, encoding) in [(vector.raw, OfflineEncoding.raw), (vector.base64, .base64), (vector.fairyTale, .fairytale)] {
            let found = try PasteReader.read(text)
            #expect(found.envelope == vector.envelope)
            #expect(found.form == vector.form && found.encoding == encoding)
            #expect(found.repairs.isEmpty, "\(encoding): \(found.repairs)")
        }
    }

    @Test("Android's decoder (BigInteger(bits, 2).toByteArray()) gets our compressed bytes back for every vector")
    func androidDecoderReadsOurs() throws {
        for vector in Self.vectors where vector.form == .android {
            let nibbles = Self.nibbles(vector.fairyTale, table: FairyTale.androidDigits)
            #expect(Self.bigIntegerBytes(nibbles) == vector.payload, "\(vector.name)")
            #expect(try RawDeflate.inflate(Self.bigIntegerBytes(nibbles)) == FairyTale.abbreviate(Array(vector.raw.utf8), form: .android))
            // The plain level-9 stream would not survive when it starts at 0x80 or above.
            let plain = RawDeflate.deflate(FairyTale.abbreviate(Array(vector.raw.utf8), form: .android), level: 9)
            if plain[0] >= 0x80 {
                let plainNibbles = plain.flatMap { [$0 >> 4, $0 & 0x0F] }
                #expect(Self.bigIntegerBytes(plainNibbles) != plain)
                #expect(throws: OfflineError.self) { try RawDeflate.inflate(Self.bigIntegerBytes(plainNibbles)) }
            }
        }
    }

    @Test("every form and encoding round-trips through the reader, cover sentences included")
    func roundTrips() throws {
        var generator = SystemRandomNumberGenerator()
        for vector in Self.vectors {
            for form in OfflineEnvelope.Form.allCases {
                for encoding in OfflineEncoding.allCases {
                    let text = encoding.encode(vector.envelope, form: form, using: &generator)
                    let found = try PasteReader.read(text)
                    #expect(found.envelope == vector.envelope && found.form == form && found.encoding == encoding)
                }
            }
        }
        for cover in FairyTale.coverSentences {
            #expect(!cover.unicodeScalars.contains { PasteReader.isDigit($0) })
            #expect(!cover.unicodeScalars.contains { [.format, .control].contains($0.properties.generalCategory) })
        }
    }

    // MARK: - Mangled pastes

    struct Damage: Sendable, CustomTestStringConvertible {
        let name: String
        let encoding: OfflineEncoding
        let form: OfflineEnvelope.Form
        let mangle: @Sendable (String) -> String
        /// The repairs the reader must report, or the error it must give.
        let expected: Result<Set<PasteReader.Repair>, OfflineError>
        var testDescription: String { name }
    }

    private static func wrapped(_ text: String, width: Int, separator: String = "\n") -> String {
        var lines: [String] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            lines.append(String(rest.prefix(width)))
            rest = rest.dropFirst(width)
        }
        return lines.joined(separator: separator)
    }

    private static func quoted(_ text: String) -> String {
        "On Tuesday, Bob <bob@example.org> wrote:\n" + text.split(separator: "\n", omittingEmptySubsequences: false).map { "> " + $0 }.joined(separator: "\n")
            + "\n\nThanks, got it."
    }

    /// `text` with `scalar` put before and after its invisible run.
    private static func marking(_ text: String, with scalar: Unicode.Scalar) -> String {
        var scalars = Array(text.unicodeScalars)
        guard let start = scalars.firstIndex(where: { PasteReader.isDigit($0) }) else { return text }
        scalars.insert(scalar, at: start)
        scalars.append(scalar)
        return Self.string(scalars)
    }

    private static func string(_ scalars: some Sequence<Unicode.Scalar>) -> String {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view)
    }

    static let damages: [Damage] = [
        Damage(name: "base64 wrapped at 76 columns", encoding: .base64, form: .android, mangle: { wrapped($0, width: 76) }, expected: .success([.joinedLines])),
        Damage(name: "base64 wrapped with CRLF", encoding: .base64, form: .ios, mangle: { wrapped($0, width: 64, separator: "\r\n") }, expected: .success([.joinedLines])),
        Damage(name: "base64 with words around", encoding: .base64, form: .android, mangle: { "Here it is: \($0) see you" }, expected: .success([.textAround])),
        Damage(name: "base64 with a word glued after the padding", encoding: .base64, form: .android, mangle: { "Hi Bob\n\($0)\nthanks" }, expected: .success([.textAround])),
        Damage(name: "base64 in a quoted e-mail reply", encoding: .base64, form: .android, mangle: { quoted(wrapped($0, width: 70)) }, expected: .success([.joinedLines, .textAround, .quoteMarkers])),
        Damage(name: "base64 with spaces from a chat app", encoding: .base64, form: .ios, mangle: { wrapped($0, width: 40, separator: " ") }, expected: .success([.joinedLines])),
        Damage(name: "raw JSON with text around", encoding: .raw, form: .android, mangle: { "msg: \($0) (sent with SecureChats)" }, expected: .success([.textAround])),
        Damage(name: "raw JSON wrapped by a mail client", encoding: .raw, form: .ios, mangle: { wrapped($0, width: 72) }, expected: .success([.joinedLines])),
        Damage(name: "raw JSON in a quoted reply", encoding: .raw, form: .android, mangle: { quoted(wrapped($0, width: 72)) }, expected: .success([.joinedLines, .textAround, .quoteMarkers])),
        Damage(name: "raw JSON with WhatsApp Web's direction marks", encoding: .raw, form: .android, mangle: { "\u{200E}" + $0 + "\u{200F}" }, expected: .success([])),
        Damage(name: "Fairy Tale (Android) with U+200E inserted around the run", encoding: .fairytale, form: .android, mangle: { marking($0, with: "\u{200E}") }, expected: .success([.insertedMarks(2)])),
        Damage(name: "Fairy Tale (iOS) with U+200E/U+200F inserted throughout", encoding: .fairytale, form: .ios,
               mangle: { text in string(text.unicodeScalars.enumerated().flatMap { $0.offset % 97 == 5 ? [$0.element, "\u{200F}"] : [$0.element] }) },
               expected: .success([.insertedMarks(0)])),
        Damage(name: "Fairy Tale (iOS) with U+200E/U+200F stripped (it has none)", encoding: .fairytale, form: .ios, mangle: { string($0.unicodeScalars.filter { $0 != "\u{200E}" && $0 != "\u{200F}" }) }, expected: .success([])),
        Damage(name: "Fairy Tale with text after it", encoding: .fairytale, form: .android, mangle: { $0 + " What a lovely story!" }, expected: .success([])),
        Damage(name: "Fairy Tale with a stray invisible character in the text", encoding: .fairytale, form: .android, mangle: { "Look\u{200B}: " + $0 }, expected: .success([.strayInvisibles(1)])),
        Damage(name: "Fairy Tale (Android) with U+200E/U+200F stripped", encoding: .fairytale, form: .android, mangle: { string($0.unicodeScalars.filter { $0 != "\u{200E}" && $0 != "\u{200F}" }) }, expected: .failure(OfflineError(.hiddenTextStripped))),
        Damage(name: "Fairy Tale with every invisible character stripped", encoding: .fairytale, form: .android, mangle: { string($0.unicodeScalars.filter { !PasteReader.isDigit($0) }) }, expected: .failure(OfflineError(.noMessage))),
        Damage(name: "Fairy Tale cut in half", encoding: .fairytale, form: .ios, mangle: { string($0.unicodeScalars.prefix($0.unicodeScalars.count / 2)) }, expected: .failure(OfflineError(.hiddenTextDamaged))),
    ]

    @Test("mangled pastes give the message and say what was repaired, or the right error", arguments: damages)
    func mangled(_ damage: Damage) throws {
        let vector = try #require(Self.vectors.first { $0.envelope.kind == .message && $0.form == damage.form })
        let text = damage.mangle(damage.encoding.encode(vector.envelope, form: damage.form, cover: FairyTale.coverSentences[3]))
        switch damage.expected {
        case .success(let repairs):
            let found = try PasteReader.read(text)
            #expect(found.envelope == vector.envelope && found.encoding == damage.encoding && found.form == damage.form)
            if repairs == [.insertedMarks(0)] {
                #expect(found.repairs.contains { if case .insertedMarks(let count) = $0 { count > 0 } else { false } })
            } else {
                #expect(Set(found.repairs) == repairs)
            }
        case .failure(let error):
            #expect(throws: error) { try PasteReader.read(text) }
        }
    }

    @Test("Android's own writer may leave off a leading zero nibble, and its reader a sign byte: both read")
    func androidNibbleQuirks() throws {
        let vector = try #require(Self.vectors.first { $0.form == .android && $0.payload.first! < 0x10 })
        var scalars = Array(vector.fairyTale.unicodeScalars)
        let start = try #require(scalars.firstIndex { PasteReader.isDigit($0) })
        #expect(scalars[start] == FairyTale.androidDigits[0])
        scalars.remove(at: start)
        let odd = try PasteReader.read(Self.string(scalars))
        #expect(odd.envelope == vector.envelope && odd.repairs == [.oddNibbleCount])

        // A stream starting at 0x80 or above behind BigInteger's sign byte.
        let high = try #require(Self.vectors.first { $0.form == .android && $0.firstByte >= 0x80 })
        let plain = RawDeflate.deflate(FairyTale.abbreviate(Array(high.raw.utf8), form: .android), level: 9)
        let signed = [UInt8(0)] + plain
        let text = "Once." + Self.string(signed.flatMap { [FairyTale.androidDigits[Int($0 >> 4)], FairyTale.androidDigits[Int($0 & 0x0F)]] })
        #expect(try PasteReader.read(text).envelope == high.envelope)
    }

    @Test("the reader's digit switch agrees with both tables, and nothing else is a digit")
    func digitSwitch() {
        for (index, scalar) in FairyTale.androidDigits.enumerated() { #expect(PasteReader.digitValues(scalar).android == Int8(index)) }
        for (index, scalar) in FairyTale.iOSDigits.enumerated() { #expect(PasteReader.digitValues(scalar).ios == Int8(index)) }
        let all = Set(FairyTale.androidDigits + FairyTale.iOSDigits)
        var wrong: [UInt32] = []
        for value in UInt32(0)...0x3_0000 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let values = PasteReader.digitValues(scalar)
            if PasteReader.isDigit(scalar) != all.contains(scalar) || (values.android >= 0) != FairyTale.androidDigits.contains(scalar)
                || (values.ios >= 0) != FairyTale.iOSDigits.contains(scalar)
            {
                wrong.append(value)
            }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(8))")
    }

    @Test("text with nothing in it, or only brackets, is refused with the right reason")
    func nothingToRead() {
        #expect(throws: OfflineError(.noMessage)) { try PasteReader.read("") }
        #expect(throws: OfflineError(.noMessage)) { try PasteReader.read("Hello Bob, how are you?") }
        #expect(throws: OfflineError(.noMessage)) { try PasteReader.read(FairyTale.coverSentences[0]) }
        #expect(throws: OfflineError(.malformedEnvelope)) { try PasteReader.read("see [1] and {2}") }
        #expect(throws: OfflineError(.malformedEnvelope)) { try PasteReader.read(Base64.encodeString(Array("[1,2,3".utf8))) }
        #expect(throws: OfflineError(.tooLarge)) { try PasteReader.read(String(repeating: "a", count: PasteReader.maxTextByteCount + 1)) }
    }

    // MARK: - Helpers

    private static func nibbles(_ text: String, table: [Unicode.Scalar]) -> [UInt8] {
        text.unicodeScalars.compactMap { scalar in table.firstIndex(of: scalar).map(UInt8.init) }
    }

    /// What Java's `new BigInteger(bits, 2).toByteArray()` gives for these nibbles: the
    /// number's minimal two's-complement bytes (leading zero bytes dropped, a `0x00` put
    /// before a first byte ≥ `0x80`).
    private static func bigIntegerBytes(_ nibbles: [UInt8]) -> [UInt8] {
        var padded = nibbles
        if padded.count % 2 == 1 { padded.insert(0, at: 0) }
        var bytes = stride(from: 0, to: padded.count, by: 2).map { padded[$0] << 4 | padded[$0 + 1] }
        while bytes.count > 1, bytes[0] == 0 { bytes.removeFirst() }
        if let first = bytes.first, first >= 0x80 { bytes.insert(0, at: 0) }
        return bytes
    }
}
