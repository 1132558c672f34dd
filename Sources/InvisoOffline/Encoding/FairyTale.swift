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

    /// The table of a form.
    static func digits(_ form: OfflineEnvelope.Form) -> [Unicode.Scalar] { form == .android ? androidDigits : iOSDigits }

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
        let payload = compress(Array(envelope.json(form).utf8), form: form)
        let digits = digits(form)
        var text = cover.unicodeScalars.map { $0 }
        text.reserveCapacity(text.count + payload.count * 2)
        for byte in payload {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: text)
        return String(view)
    }

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
        var text = json
        for (key, short) in form == .android ? androidAbbreviations : iOSAbbreviations {
            text = replacing(quoted: key, with: short, in: text)
        }
        return text
    }

    /// Restores `form`'s abbreviations (the reverse order of writing).
    package static func expand(_ json: [UInt8], form: OfflineEnvelope.Form) -> [UInt8] {
        var text = json
        for (key, short) in (form == .android ? androidAbbreviations : iOSAbbreviations).reversed() {
            text = replacing(quoted: short, with: key, in: text)
        }
        return text
    }

    /// `text` with every `"old"` replaced by `"new"`.
    private static func replacing(quoted old: String, with new: String, in text: [UInt8]) -> [UInt8] {
        let quote = UInt8(ascii: "\"")
        let pattern = [quote] + Array(old.utf8) + [quote]
        let replacement = [quote] + Array(new.utf8) + [quote]
        guard text.count >= pattern.count else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        var index = 0
        let last = text.count - pattern.count
        while index < text.count {
            if index <= last, text[index] == quote, text[index..<(index + pattern.count)].elementsEqual(pattern) {
                out += replacement
                index += pattern.count
            } else {
                out.append(text[index])
                index += 1
            }
        }
        return out
    }
}
