/// Finds the envelope in whatever a user pasted: any encoding, either form, either Fairy
/// Tale table, and the damage copy and paste does on the way.
///
/// ```
/// paste ──► exactly JSON or one line of base64? ──yes──► read straight from its UTF-8
///   │ no
///   └──► ≥ 16 table characters? ──yes──► Fairy Tale: table, run, nibbles, inflate, expand
///          │ no (or it failed)
///          ├──► raw: a '[' or '{' … the last matching closer, whitespace removed
///          └──► base64: runs of the alphabet (whitespace inside joined) decoding to '[' or '{'
/// ```
///
/// Before raw and base64 are tried, e-mail quote markers (`>` at the start of a line) and
/// invisible characters are dropped. What was repaired is reported (``Repair``); when
/// nothing decodes, the error says why and what to do, never a guess at a message.
/// Work is bounded: at most 512 KiB of text, 16 raw starts, 64 base64 candidates.
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
        if let found = clean(text) { return found }
        var fairyTaleError: OfflineError?
        let scan = InvisibleScan(text)
        if scan.count >= minimumRun {
            do {
                return try readFairyTale(scan)
            } catch {
                fairyTaleError = error
            }
        }
        let (cleaned, quoted) = visibleText(Array(text.unicodeScalars))
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

// MARK: - Clean pastes

extension PasteReader {
    /// A paste that is exactly raw JSON or one line of base64 (surrounding whitespace
    /// aside), read straight from its UTF-8 — the common case, without the scalar copies
    /// the repairs need. `nil` sends the paste down the general path.
    private static func clean(_ text: String) -> Found? {
        let bytes = text.utf8
        guard let first = bytes.firstIndex(where: { !isASCIISpace($0) }),
            let last = bytes.lastIndex(where: { !isASCIISpace($0) })
        else { return nil }
        let head = bytes[first]
        let tail = bytes[last]
        if (head == UInt8(ascii: "[") && tail == UInt8(ascii: "]")) || (head == UInt8(ascii: "{") && tail == UInt8(ascii: "}")) {
            guard let parsed = try? OfflineEnvelope.parse(json: bytes[first...last]) else { return nil }
            return Found(envelope: parsed.envelope, form: parsed.form, encoding: .raw, repairs: [])
        }
        guard head == UInt8(ascii: "W") || head == UInt8(ascii: "e") else { return nil }
        let body = bytes[first...last]
        guard body.allSatisfy({ isBase64Byte($0) }), let decoded = EnvelopeBase64.decode(bytes: Array(body)),
            let parsed = try? OfflineEnvelope.parse(json: decoded)
        else { return nil }
        return Found(envelope: parsed.envelope, form: parsed.form, encoding: .base64, repairs: [])
    }

    @inline(__always)
    private static func isASCIISpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    @inline(__always)
    private static func isBase64Byte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="):
            true
        default: false
        }
    }
}

// MARK: - Fairy Tale

extension PasteReader {
    /// A scalar's nibble in the Android and the iOS table (−1 where it is not a digit): a
    /// switch, not a set lookup, because every scalar of a paste goes through it.
    @inline(__always)
    static func digitValues(_ scalar: Unicode.Scalar) -> (android: Int8, ios: Int8) {
        switch scalar.value {
        case 0x200C: (0, 0)
        case 0x200D: (1, 1)
        case 0x2060: (2, 2)
        case 0x2061: (-1, 3)
        case 0x2062: (3, 4)
        case 0x2063: (-1, 5)
        case 0x2064: (7, 6)
        case 0x200B: (4, 14)
        case 0x200E: (5, -1)
        case 0x200F: (6, -1)
        case 0x206A: (8, 7)
        case 0x206B: (9, 8)
        case 0x206C: (10, 9)
        case 0x206D: (11, 10)
        case 0x206E: (12, 11)
        case 0x206F: (13, 12)
        case 0xFEFF: (14, 13)
        case 0x061C: (15, 15)
        default: (-1, -1)
        }
    }

    /// Whether `scalar` is in either table.
    @inline(__always)
    static func isDigit(_ scalar: Unicode.Scalar) -> Bool {
        let values = digitValues(scalar)
        return values.android >= 0 || values.ios >= 0
    }

    /// In Android's table only: U+200E, U+200F (the marks some apps insert or strip).
    @inline(__always)
    static func isAndroidOnly(_ scalar: Unicode.Scalar) -> Bool { scalar == "\u{200E}" || scalar == "\u{200F}" }

    /// In the iOS table only: U+2061, U+2063.
    @inline(__always)
    static func isIOSOnly(_ scalar: Unicode.Scalar) -> Bool { scalar == "\u{2061}" || scalar == "\u{2063}" }

    /// The table characters of a paste, in one pass over its UTF-8, as nibbles of either
    /// table (−1 where a character is not in that table): how many are U+200E/U+200F,
    /// whether any is iOS-only, and where the longest unbroken run is.
    ///
    /// The eighteen characters are U+200B–U+200F (`E2 80 8B`–`8F`), U+2060–U+2064 (`E2 81
    /// A0`–`A4`), U+206A–U+206F (`E2 81 AA`–`AF`), U+FEFF (`EF BB BF`) and U+061C (`D8 9C`):
    /// matched as bytes, because a paste is thousands of them and decoding each scalar cost
    /// more than inflating the payload.
    struct InvisibleScan {
        var android: [Int8] = []
        var ios: [Int8] = []
        var marks = 0
        var hasIOSOnly = false
        /// The longest run of adjacent table characters, as a range of the arrays.
        var run: Range<Int> = 0..<0

        var count: Int { android.count }

        init(_ text: String) {
            var text = text
            text.withUTF8 { bytes in scan(bytes) }
        }

        private mutating func scan(_ bytes: UnsafeBufferPointer<UInt8>) {
            // At most one table character per two bytes: written by index into buffers of
            // that size, trimmed at the end (appending cost more than the rest of the scan).
            let capacity = bytes.count / 2
            var count = 0
            var marks = 0
            var hasIOSOnly = false
            var run: Range<Int> = 0..<0
            android = [Int8](unsafeUninitializedCapacity: capacity) { androidOut, androidCount in
                ios = [Int8](unsafeUninitializedCapacity: capacity) { iosOut, iosCount in
                    var runStart = 0
                    var inRun = false
                    var index = 0
                    let end = bytes.count
                    while index < end {
                        let lead = bytes[index]
                        var values: (android: Int8, ios: Int8) = (-1, -1)
                        if lead < 0x80 {
                            index += 1
                        } else if lead == 0xE2, index + 2 < end, bytes[index + 1] & 0xFE == 0x80 {
                            // U+2000…U+207F: the last byte's low six bits pick the character.
                            let table = bytes[index + 1] == 0x80 ? generalPunctuation : wordJoiners
                            values = table[Int(bytes[index + 2] & 0x3F)]
                            index += 3
                        } else if lead == 0xEF, index + 2 < end, bytes[index + 1] == 0xBB, bytes[index + 2] == 0xBF {
                            values = (14, 13)  // U+FEFF
                            index += 3
                        } else if lead == 0xD8, index + 1 < end, bytes[index + 1] == 0x9C {
                            values = (15, 15)  // U+061C
                            index += 2
                        } else {
                            // Another multi-byte character: skip its continuation bytes.
                            index += lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2
                        }
                        guard values.android >= 0 || values.ios >= 0 else {
                            inRun = false
                            continue
                        }
                        if !inRun {
                            inRun = true
                            runStart = count
                        }
                        androidOut[count] = values.android
                        iosOut[count] = values.ios
                        count += 1
                        if values.ios < 0 { marks += 1 }
                        if values.android < 0 { hasIOSOnly = true }
                        if count - runStart > run.count { run = runStart..<count }
                    }
                    iosCount = count
                }
                androidCount = count
            }
            self.marks = marks
            self.hasIOSOnly = hasIOSOnly
            self.run = run
        }
    }

    /// ``digitValues(_:)`` of U+2000…U+203F and U+2040…U+207F, by the low six bits of the
    /// UTF-8 sequence's last byte (`E2 80 xx` and `E2 81 xx`).
    static let generalPunctuation = (0..<64).map { digitValues(Unicode.Scalar(0x2000 + UInt32($0))!) }
    static let wordJoiners = (0..<64).map { digitValues(Unicode.Scalar(0x2040 + UInt32($0))!) }

    /// Tries the readings of a Fairy Tale run in turn, each made only when the one before
    /// failed: the whole run in the table its characters say, then (Android) the longest
    /// unbroken stretch, then with inserted marks trimmed at its ends, then the iOS table
    /// without marks.
    private static func readFairyTale(_ scan: InvisibleScan) throws(OfflineError) -> Found {
        let marks = scan.marks
        var failure: OfflineError?
        func attempt(_ nibbles: @autoclosure () -> [Int8], _ repairs: @autoclosure () -> [Repair]) -> Found? {
            do {
                return try decode(nibbles(), repairs: repairs())
            } catch {
                if failure == nil || failure?.code == .notCompressed { failure = error }
                return nil
            }
        }
        // Only the iOS table has U+2061/U+2063, and it has no U+200E/U+200F: those were
        // inserted on the way.
        let iOSReading = { scan.ios.filter { $0 >= 0 } }
        let markRepairs: [Repair] = marks > 0 ? [.insertedMarks(marks)] : []
        if scan.hasIOSOnly {
            if let found = attempt(iOSReading(), markRepairs) { return found }
        } else {
            if let found = attempt(scan.android, []) { return found }
            let run = scan.android[scan.run]
            let stray = scan.count - run.count
            let strayRepairs: [Repair] = stray > 0 ? [.strayInvisibles(stray)] : []
            if stray > 0, let found = attempt(Array(run), strayRepairs) { return found }
            // Marks inserted at the ends of the run (where apps add them around a line); the
            // run's own first and last nibbles may be 5 or 6 too, so up to two are tried.
            let isMark: (Int8) -> Bool = { $0 == 5 || $0 == 6 }
            let leading = min(2, run.prefix(while: isMark).count)
            let trailing = min(2, run.reversed().prefix(while: isMark).count)
            for front in 0...leading {
                for back in 0...trailing where front + back > 0 && front + back < run.count {
                    if let found = attempt(Array(run.dropFirst(front).dropLast(back)), strayRepairs + [.insertedMarks(front + back)]) {
                        return found
                    }
                }
            }
            // An iOS run short enough to have no U+2061/U+2063.
            if let found = attempt(iOSReading(), markRepairs) { return found }
        }
        // Android's table needs U+200E/U+200F for nibbles 5 and 6, one nibble in eight: a
        // long run without any lost them to an app that strips direction marks.
        if marks == 0, scan.count >= 64, !scan.hasIOSOnly {
            throw OfflineError(.hiddenTextStripped, "U+200E/U+200F")
        }
        if let failure, failure.code == .malformedEnvelope { throw failure }
        throw OfflineError(.hiddenTextDamaged, "hidden text")
    }

    /// Nibbles (0…15) to bytes, inflated, abbreviations restored, parsed.
    private static func decode(_ nibbles: [Int8], repairs: [Repair]) throws(OfflineError) -> Found {
        var repairs = repairs
        let odd = nibbles.count % 2
        if odd == 1 { repairs.append(.oddNibbleCount) }
        // An odd count reads as if a zero nibble came first, as Android's BigInteger does.
        var bytes = [UInt8](repeating: 0, count: (nibbles.count + odd) / 2)
        nibbles.withUnsafeBufferPointer { nibbles in
            var source = 0
            if odd == 1 {
                bytes[0] = UInt8(nibbles[0])
                source = 1
            }
            for index in odd..<bytes.count {
                bytes[index] = UInt8(nibbles[source]) << 4 | UInt8(nibbles[source + 1])
                source += 2
            }
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
        // ASCII first: most pastes are, and Unicode properties cost a table lookup.
        if scalar.value < 0x80 { return (scalar.value < 0x20 && scalar != "\t") || scalar.value == 0x7F }
        if isDigit(scalar) { return true }
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
