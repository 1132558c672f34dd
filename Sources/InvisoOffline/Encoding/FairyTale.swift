/// SecureChats' "Fairy Tale" steganography: an envelope hidden as invisible characters
/// behind a decoy sentence (`../shared/docs/SECURECHATS.md`, "Encodings").
///
/// ```
/// envelope ──json(form)──► abbreviate keys ──raw DEFLATE──► bytes ──nibbles──► table
///            android: positional      "publicKey"→"pK"     level 9       high nibble first
///            ios:     keyed, \/       17 keys              level 5       16 invisible scalars
///
/// text = cover sentence ‖ invisible run      (no marker, length or checksum)
/// ```
///
/// The two apps use different tables, abbreviations and levels; the table follows the
/// form (an Android-form envelope goes out in the Android table). Android's decoder reads
/// the run back with `BigInteger(bits, 2).toByteArray()`, which drops a leading `0x00`
/// byte and prepends one before a byte ≥ `0x80`, after which inflating fails: when zlib's
/// level-9 output (the same bytes as Java's `Deflater(9, true)`) starts outside
/// `0x01…0x7F`, the stream is written again behind an empty fixed-Huffman block, whose
/// first byte is `0x02`. Reading is ``PasteReader``'s job.
public enum FairyTale {
    /// The sixteen invisible scalars of Android's table, for nibbles 0…F.
    static let androidDigits: [Unicode.Scalar] = [
        "\u{200C}", "\u{200D}", "\u{2060}", "\u{2062}", "\u{200B}", "\u{200E}", "\u{200F}", "\u{2064}",
        "\u{206A}", "\u{206B}", "\u{206C}", "\u{206D}", "\u{206E}", "\u{206F}", "\u{FEFF}", "\u{061C}",
    ]

    /// The sixteen invisible scalars of the iOS port's table, for nibbles 0…F.
    static let iOSDigits: [Unicode.Scalar] = [
        "\u{200C}", "\u{200D}", "\u{2060}", "\u{2061}", "\u{2062}", "\u{2063}", "\u{2064}", "\u{206A}",
        "\u{206B}", "\u{206C}", "\u{206D}", "\u{206E}", "\u{206F}", "\u{FEFF}", "\u{200B}", "\u{061C}",
    ]

    /// Android's key abbreviations, applied in this order (restored in reverse).
    static let androidAbbreviations: [(key: String, short: String)] = [
        ("preKeyResponse", "pR"), ("identityKey", "i"), ("publicKey", "pK"), ("devices", "d"), ("deviceId", "dI"),
        ("registrationId", "rI"), ("signedPreKey", "sK"), ("keyId", "k"), ("signature", "s"), ("preKey", "prK"),
        ("ciphertextMessage", "c"), ("ciphertextType", "cT"), ("timestamp", "t"), ("signalProtocolAddressName", "a"),
    ]

    /// The iOS port's key abbreviations, applied in this order (restored in reverse).
    static let iOSAbbreviations: [(key: String, short: String)] = [
        ("preKeyResponse", "pR"), ("ciphertextMessage", "cM"), ("ciphertextType", "cT"), ("timestamp", "ts"),
        ("signalProtocolAddressName", "a"), ("deviceId", "d"), ("identityKey", "iK"), ("devices", "dv"),
        ("kyberPubKey", "kP"), ("kyberPreKeyId", "kI"), ("kyberSignature", "kS"), ("signedPreKey", "sP"),
        ("preKey", "pK"), ("keyId", "kd"), ("publicKey", "pk"), ("signature", "sg"), ("registrationId", "rI"),
    ]

    /// The DEFLATE level each app compresses with: Android 9, iOS 5.
    static func level(_ form: OfflineEnvelope.Form) -> Int32 { form == .android ? 9 : 5 }

    /// Decoy sentences, our own, in the manner of the Grimms' tales the apps quote. None
    /// contains an invisible or control character (Android's decoder looks for those).
    public static let coverSentences: [String] = [
        "Long ago, at the edge of a dark wood, there lived a baker who sang to his bread every morning.",
        "The old tower stood so high that the clouds would stop to rest on its roof.",
        "Every evening the youngest sister swept the hearth and counted the stars through the chimney.",
        "A grey fox promised the king's gardener three wishes and kept not a single one.",
        "When the clock struck twelve, the lanterns in the castle garden went out one by one.",
        "The queen planted a rose by the gate, and it bloomed only on the coldest night of the year.",
        "Beyond the seven hills a shepherd girl found a golden key among the river reeds.",
        "The little tailor sewed a coat from moonlight and sold it for a loaf and a song.",
        "Nobody in the kingdom knew why the blackbird sang only when it rained.",
        "The woodcutter's son climbed the bare hill and found a door with no handle.",
        "By morning the dancing shoes were worn through, though the princesses swore they had slept.",
        "The well at the crossroads answered every question but the one that mattered.",
    ]

    /// The Fairy Tale text of `envelope` in `form`, behind `cover`.
    ///
    /// - Parameters:
    ///   - envelope: What to hide.
    ///   - form: The JSON form; it also picks the table, abbreviations and level.
    ///   - cover: The visible sentence (one of ``coverSentences``, or any text without
    ///     invisible or control characters).
    public static func encode(_ envelope: OfflineEnvelope, form: OfflineEnvelope.Form, cover: String) -> String {
        let payload = compress(envelope.jsonBytes(form), form: form)
        // Written as UTF-8 directly: each byte's two digits (4 to 6 bytes), copied from a
        // table of all 256 pairs.
        let pairs = form == .android ? androidPairs : iOSPairs
        let coverBytes = Array(cover.utf8)
        var text = [UInt8](repeating: 0, count: coverBytes.count + payload.count * 6)
        let used = text.withUnsafeMutableBufferPointer { out in
            var position = 0
            for byte in coverBytes {
                out[position] = byte
                position += 1
            }
            pairs.bytes.withUnsafeBufferPointer { table in
                for byte in payload {
                    let start = Int(byte) * 6
                    for offset in 0..<Int(pairs.lengths[Int(byte)]) {
                        out[position] = table[start + offset]
                        position += 1
                    }
                }
            }
            return position
        }
        return String(decoding: text[..<used], as: UTF8.self)
    }

    /// For each byte value, the UTF-8 of its high and low nibble's digits: 6 bytes a slot,
    /// and how many of them are used.
    private static func pairs(_ digits: [Unicode.Scalar]) -> (bytes: [UInt8], lengths: [UInt8]) {
        var bytes = [UInt8](repeating: 0, count: 256 * 6)
        var lengths = [UInt8](repeating: 0, count: 256)
        for value in 0..<256 {
            let pair = Array(String(digits[value >> 4]).utf8) + Array(String(digits[value & 0x0F]).utf8)
            bytes.replaceSubrange((value * 6)..<(value * 6 + pair.count), with: pair)
            lengths[value] = UInt8(pair.count)
        }
        return (bytes, lengths)
    }

    private static let androidPairs = pairs(androidDigits)
    private static let iOSPairs = pairs(iOSDigits)

    /// The compressed payload of `json` as `form`'s app writes it (abbreviated, deflated;
    /// for Android with a first byte in `0x01…0x7F`).
    package static func compress(_ json: [UInt8], form: OfflineEnvelope.Form) -> [UInt8] {
        let abbreviated = abbreviate(json, form: form)
        let level = level(form)
        let compressed = RawDeflate.deflate(abbreviated, level: level)
        guard form == .android, let first = compressed.first, !(0x01...0x7F).contains(first) else { return compressed }
        return RawDeflate.deflate(abbreviated, level: level, leadingEmptyBlock: true)
    }

    /// Replaces every quoted key of `form`'s list by its abbreviation.
    package static func abbreviate(_ json: [UInt8], form: OfflineEnvelope.Form) -> [UInt8] {
        replacingQuoted(json, form == .android ? androidShort : iOSShort)
    }

    /// Restores `form`'s abbreviations.
    package static func expand(_ json: [UInt8], form: OfflineEnvelope.Form) -> [UInt8] {
        replacingQuoted(json, form == .android ? androidLong : iOSLong)
    }

    private static func table(_ pairs: [(key: String, short: String)], reversed: Bool) -> [[UInt8]: [UInt8]] {
        Dictionary(uniqueKeysWithValues: pairs.map { reversed ? (Array($0.short.utf8), Array($0.key.utf8)) : (Array($0.key.utf8), Array($0.short.utf8)) })
    }

    private static let androidShort = table(androidAbbreviations, reversed: false)
    private static let androidLong = table(androidAbbreviations, reversed: true)
    private static let iOSShort = table(iOSAbbreviations, reversed: false)
    private static let iOSLong = table(iOSAbbreviations, reversed: true)
    /// Longer quoted strings are values (base64, UUIDs), never keys: not looked up.
    private static let longestKey = 25

    /// `text` with each quoted string that `table` names replaced, in one pass.
    ///
    /// The apps replace key by key (`"publicKey"` → `"pK"` over the whole text, then the
    /// next); no key is another's abbreviation, so one pass over the quoted strings gives
    /// the same text.
    private static func replacingQuoted(_ text: [UInt8], _ table: [[UInt8]: [UInt8]]) -> [UInt8] {
        let quote = UInt8(ascii: "\"")
        var out: [UInt8] = []
        out.reserveCapacity(text.count + 64)
        var index = 0
        while index < text.count {
            guard text[index] == quote, let close = text[(index + 1)...].firstIndex(of: quote) else {
                out.append(text[index])
                index += 1
                continue
            }
            let token = text[(index + 1)..<close]
            out.append(quote)
            if token.count <= longestKey, let replacement = table[Array(token)] {
                out += replacement
            } else {
                out += token
            }
            out.append(quote)
            index = close + 1
        }
        return out
    }
}
