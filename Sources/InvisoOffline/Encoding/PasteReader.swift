/// Finds the envelope in whatever a user pasted: any encoding, either form, either Fairy
/// Tale table, and the damage copy and paste does on the way.
///
/// ```
/// paste ──► ≥ 16 table characters? ──yes──► Fairy Tale: table, run, nibbles, inflate, expand
///              │ no (or it failed)
///              ├──► raw: a '[' or '{' … the last matching closer, whitespace removed
///              └──► base64: runs of the alphabet (whitespace inside joined) decoding to '[' or '{'
/// ```
///
/// Before raw and base64 are tried, e-mail quote markers (`>` at the start of a line) and
/// invisible characters are dropped. What was repaired is reported (``Repair``); when
/// nothing decodes, the error says why and what to do, never a guess at a message.
/// Work is bounded: at most 512 KiB of text, 16 raw starts, 256 base64 candidates.
public enum PasteReader {
    /// The longest paste read, in UTF-8 bytes (a Fairy Tale invite is about 11 KB).
    public static let maxTextByteCount = 512 * 1024
    /// Fewer table characters than this are not taken for a Fairy Tale run (8 bytes).
    static let minimumRun = 16

    /// An envelope found in a paste.
    public struct Found: Sendable {
        /// The envelope.
        public let envelope: OfflineEnvelope
        /// Its JSON form.
        public let form: OfflineEnvelope.Form
        /// The encoding it came in.
        public let encoding: OfflineEncoding
        /// What was repaired or ignored to read it (empty for a clean paste).
        public let repairs: [Repair]
    }

    /// Damage that was repaired (or text that was ignored) to find the envelope.
    public enum Repair: Sendable, Hashable, CustomStringConvertible {
        /// Text before or after the payload was ignored.
        case textAround
        /// Line breaks or spaces inside the payload were removed.
        case joinedLines
        /// E-mail quote markers (`>`) were removed.
        case quoteMarkers
        /// U+200E/U+200F marks that the copying app inserted were removed (how many).
        case insertedMarks(Int)
        /// Invisible characters outside the hidden run were ignored (how many).
        case strayInvisibles(Int)
        /// The hidden run had an odd number of characters (a leading zero nibble was assumed,
        /// as Android's decoder does).
        case oddNibbleCount

        /// A sentence for the user.
        public var description: String {
            switch self {
            case .textAround: "ignored the text around the message"
            case .joinedLines: "joined the message's broken lines"
            case .quoteMarkers: "removed the quote markers (>) of a reply"
            case .insertedMarks(let count):
                "removed \(count) direction mark\(count == 1 ? "" : "s") (U+200E/U+200F) that the app you copied from inserted"
            case .strayInvisibles(let count):
                "ignored \(count) invisible character\(count == 1 ? "" : "s") outside the hidden text"
            case .oddNibbleCount: "read a hidden text of odd length as Android does"
            }
        }
    }

    /// Finds the envelope in `text`.
    ///
    /// - Throws: ``OfflineError/Code/tooLarge``; ``OfflineError/Code/hiddenTextStripped``
    ///   when a Fairy Tale run lost its U+200E/U+200F characters;
    ///   ``OfflineError/Code/hiddenTextDamaged`` when a run is there but does not decode
    ///   (cut or changed); ``OfflineError/Code/malformedEnvelope`` when JSON or base64 was
    ///   found but is not an envelope; ``OfflineError/Code/noMessage`` when there is
    ///   nothing to decode.
    public static func read(_ text: String) throws(OfflineError) -> Found {
        guard text.utf8.count <= maxTextByteCount else { throw OfflineError(.tooLarge, "paste") }
        let scalars = Array(text.unicodeScalars)
        var fairyTaleError: OfflineError?
        if scalars.lazy.filter({ allDigits.contains($0) }).count >= minimumRun {
            do {
                return try readFairyTale(scalars)
            } catch {
                fairyTaleError = error
            }
        }
        let (cleaned, quoted) = visibleText(scalars)
        var found: OfflineError?
        do {
            if var result = try readRaw(cleaned) {
                if quoted { result = result.adding(.quoteMarkers) }
                return result
            }
        } catch {
            found = error
        }
        do {
            if var result = try readBase64(cleaned) {
                if quoted { result = result.adding(.quoteMarkers) }
                return result
            }
        } catch {
            found = found ?? error
        }
        if let fairyTaleError { throw fairyTaleError }
        if let found { throw found }
        throw OfflineError(.noMessage, "no envelope, base64 or hidden text")
    }
}

// MARK: - Fairy Tale

extension PasteReader {
    static let androidOnly: Set<Unicode.Scalar> = Set(FairyTale.androidDigits).subtracting(FairyTale.iOSDigits)
    static let iOSOnly: Set<Unicode.Scalar> = Set(FairyTale.iOSDigits).subtracting(FairyTale.androidDigits)
    static let allDigits: Set<Unicode.Scalar> = Set(FairyTale.androidDigits).union(FairyTale.iOSDigits)
    static let androidValues = values(FairyTale.androidDigits)
    static let iOSValues = values(FairyTale.iOSDigits)

    private static func values(_ digits: [Unicode.Scalar]) -> [Unicode.Scalar: UInt8] {
        Dictionary(uniqueKeysWithValues: digits.enumerated().map { ($0.element, UInt8($0.offset)) })
    }

    /// One way to read the invisible characters: which table, which characters, and what
    /// that assumes was repaired.
    private struct Reading {
        let form: OfflineEnvelope.Form
        let digits: [Unicode.Scalar]
        let repairs: [Repair]
    }

    private static func readFairyTale(_ scalars: [Unicode.Scalar]) throws(OfflineError) -> Found {
        let invisible = scalars.filter { allDigits.contains($0) }
        let marks = invisible.filter { androidOnly.contains($0) }.count
        let run = longestRun(scalars)
        var readings: [Reading] = []
        if invisible.contains(where: { iOSOnly.contains($0) }) {
            // Only the iOS table has U+2061/U+2063, and it has no U+200E/U+200F: any of those
            // were inserted on the way.
            readings.append(
                Reading(
                    form: .ios, digits: invisible.filter { !androidOnly.contains($0) },
                    repairs: marks > 0 ? [.insertedMarks(marks)] : []))
        } else {
            readings.append(Reading(form: .android, digits: invisible, repairs: []))
            let stray = invisible.count - run.count
            if stray > 0 {
                readings.append(Reading(form: .android, digits: run, repairs: [.strayInvisibles(stray)]))
            }
            // Marks inserted at the ends of the run (where apps add them around a line); the
            // run's own first and last nibbles may be 5 or 6 too, so up to two are tried.
            let leading = min(2, run.prefix { androidOnly.contains($0) }.count)
            let trailing = min(2, run.reversed().prefix { androidOnly.contains($0) }.count)
            for front in 0...leading {
                for back in 0...trailing where front + back > 0 && front + back < run.count {
                    readings.append(
                        Reading(
                            form: .android, digits: Array(run.dropFirst(front).dropLast(back)),
                            repairs: (stray > 0 ? [.strayInvisibles(stray)] : []) + [.insertedMarks(front + back)]))
                }
            }
            // An iOS run short enough to have no U+2061/U+2063.
            readings.append(
                Reading(
                    form: .ios, digits: invisible.filter { !androidOnly.contains($0) },
                    repairs: marks > 0 ? [.insertedMarks(marks)] : []))
        }
        var failure: OfflineError?
        for reading in readings {
            do {
                return try decode(reading)
            } catch {
                if failure == nil || failure?.code == .notCompressed { failure = error }
            }
        }
        // Android's table needs U+200E/U+200F for nibbles 5 and 6, one nibble in eight: a
        // long run without any lost them to an app that strips direction marks.
        if marks == 0, invisible.count >= 64, !invisible.contains(where: { iOSOnly.contains($0) }) {
            throw OfflineError(.hiddenTextStripped, "U+200E/U+200F")
        }
        if let failure, failure.code == .malformedEnvelope { throw failure }
        throw OfflineError(.hiddenTextDamaged, "hidden text")
    }

    private static func decode(_ reading: Reading) throws(OfflineError) -> Found {
        let values = reading.form == .android ? androidValues : iOSValues
        var nibbles = reading.digits.map { values[$0]! }
        var repairs = reading.repairs
        if nibbles.count % 2 == 1 {
            nibbles.insert(0, at: 0)
            repairs.append(.oddNibbleCount)
        }
        var bytes = [UInt8](repeating: 0, count: nibbles.count / 2)
        for index in bytes.indices {
            bytes[index] = nibbles[2 * index] << 4 | nibbles[2 * index + 1]
        }
        var json: [UInt8]
        do {
            json = try RawDeflate.inflate(bytes)
        } catch {
            // Android's BigInteger puts a sign byte before a first byte ≥ 0x80.
            guard error.code == .notCompressed, bytes.first == 0 else { throw error }
            json = try RawDeflate.inflate(Array(bytes.dropFirst()))
        }
        let form: OfflineEnvelope.Form = json.first == UInt8(ascii: "{") ? .ios : .android
        json = FairyTale.expand(json, form: form)
        let parsed = try OfflineEnvelope.parse(json: json)
        return Found(envelope: parsed.envelope, form: parsed.form, encoding: .fairytale, repairs: repairs)
    }

    /// The longest stretch of adjacent table characters.
    private static func longestRun(_ scalars: [Unicode.Scalar]) -> [Unicode.Scalar] {
        var best: Range<Int> = 0..<0
        var start = 0
        for index in 0...scalars.count {
            if index < scalars.count, allDigits.contains(scalars[index]) { continue }
            if index - start > best.count { best = start..<index }
            start = index + 1
        }
        return Array(scalars[best])
    }
}

// MARK: - Raw and base64

extension PasteReader {
    /// The paste without e-mail quote markers at line starts and without invisible or
    /// control characters other than line breaks and tabs; whether quote markers were seen.
    private static func visibleText(_ scalars: [Unicode.Scalar]) -> (text: [Unicode.Scalar], quoted: Bool) {
        var out: [Unicode.Scalar] = []
        out.reserveCapacity(scalars.count)
        var atLineStart = true
        var quoted = false
        for scalar in scalars {
            if scalar == "\n" || scalar == "\r" {
                atLineStart = true
                out.append("\n")
                continue
            }
            if atLineStart {
                if scalar == ">" {
                    quoted = true
                    continue
                }
                if scalar == " " || scalar == "\t" { continue }
                atLineStart = false
            }
            if isInvisible(scalar) { continue }
            out.append(scalar)
        }
        return (out, quoted)
    }

    private static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        if allDigits.contains(scalar) { return true }
        switch scalar.properties.generalCategory {
        case .format, .control: return scalar != "\t"
        default: return false
        }
    }

    private static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\n" || scalar == "\t" || scalar == "\u{00A0}"
    }

    /// The first `[` or `{` (of the first 16) that, with everything up to the last matching
    /// closer and whitespace removed, parses as an envelope.
    private static func readRaw(_ text: [Unicode.Scalar]) throws(OfflineError) -> Found? {
        var failure: OfflineError?
        var starts = 0
        for start in text.indices where text[start] == "[" || text[start] == "{" {
            starts += 1
            if starts > 16 { break }
            let closer: Unicode.Scalar = text[start] == "[" ? "]" : "}"
            guard let end = text.lastIndex(of: closer), end > start else { continue }
            let candidate = text[start...end]
            let compact = candidate.filter { !isSpace($0) }
            var view = String.UnicodeScalarView()
            view.append(contentsOf: compact)
            do {
                let parsed = try OfflineEnvelope.parse(json: Array(String(view).utf8))
                var repairs: [Repair] = []
                if compact.count != candidate.count, candidate.contains("\n") { repairs.append(.joinedLines) }
                let before = text[..<start].contains { !isSpace($0) }
                let after = text[(end + 1)...].contains { !isSpace($0) }
                if before || after { repairs.append(.textAround) }
                return Found(envelope: parsed.envelope, form: parsed.form, encoding: .raw, repairs: repairs)
            } catch {
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
        return nil
    }

    private static func isBase64(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", "+", "/", "=": true
        default: false
        }
    }

    /// The 6-bit value of a base64 character (`nil` for `=` and anything else).
    private static func base64Value(_ scalar: Unicode.Scalar) -> Int? {
        switch scalar {
        case "A"..."Z": Int(scalar.value - 65)
        case "a"..."z": Int(scalar.value - 97 + 26)
        case "0"..."9": Int(scalar.value - 48 + 52)
        case "+": 62
        case "/": 63
        default: nil
        }
    }

    /// Whether `word` starts like the base64 of `[` or `{` (`W` or `e`, then a character
    /// whose top two bits are set).
    private static func startsLikeJSON(_ word: ArraySlice<Unicode.Scalar>) -> Bool {
        guard word.count >= 2, word.first == "W" || word.first == "e",
            let second = base64Value(word[word.startIndex + 1])
        else { return false }
        return second >= 48
    }

    /// Base64 of an envelope inside `text`: within a stretch of base64 words separated by
    /// whitespace, from a word that starts like `[` or `{` to a word end, longest first
    /// (at most 64 candidates are decoded).
    private static func readBase64(_ text: [Unicode.Scalar]) throws(OfflineError) -> Found? {
        // Words of the base64 alphabet; any other visible character ends a stretch.
        var stretches: [[ArraySlice<Unicode.Scalar>]] = []
        var words: [ArraySlice<Unicode.Scalar>] = []
        var index = 0
        while index < text.count {
            let scalar = text[index]
            if isBase64(scalar) {
                let start = index
                while index < text.count, isBase64(text[index]) { index += 1 }
                words.append(text[start..<index])
                continue
            }
            if !isSpace(scalar), !words.isEmpty {
                stretches.append(words)
                words = []
            }
            index += 1
        }
        if !words.isEmpty { stretches.append(words) }

        var budget = 64
        var failure: OfflineError?
        for stretch in stretches {
            for first in stretch.indices where startsLikeJSON(stretch[first]) {
                for last in stretch.indices.reversed() where last >= first {
                    guard budget > 0 else { break }
                    budget -= 1
                    let joined = stretch[first...last].flatMap { $0 }
                    guard joined.count % 4 != 1 else { continue }
                    var view = String.UnicodeScalarView()
                    view.append(contentsOf: joined)
                    guard let bytes = EnvelopeBase64.decode(String(view)) else { continue }
                    do {
                        let parsed = try OfflineEnvelope.parse(json: bytes)
                        var repairs: [Repair] = []
                        if last > first { repairs.append(.joinedLines) }
                        let start = stretch[first].startIndex
                        let end = stretch[last].endIndex
                        if text[..<start].contains(where: { !isSpace($0) }) || text[end...].contains(where: { !isSpace($0) }) {
                            repairs.append(.textAround)
                        }
                        return Found(envelope: parsed.envelope, form: parsed.form, encoding: .base64, repairs: repairs)
                    } catch {
                        failure = failure ?? error
                    }
                }
            }
        }
        if let failure { throw failure }
        return nil
    }
}

extension PasteReader.Found {
    fileprivate func adding(_ repair: PasteReader.Repair) -> PasteReader.Found {
        PasteReader.Found(envelope: envelope, form: form, encoding: encoding, repairs: repairs + [repair])
    }
}
