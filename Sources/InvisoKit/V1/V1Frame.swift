import InvisoCrypto
import InvisoWire

/// One Inviso v1 message as the shipped iOS app sends it: a UTF-8 JSON object with `v`
/// (1), `c` (the sender's counter), `n` (12-byte nonce), `d` (ciphertext) and `t` (16-byte
/// GCM tag), the last three in base64. The app's encoder orders keys arbitrarily and may
/// escape `/` as `\/`, so frames are parsed as JSON, never by position; unknown keys are
/// ignored, as the app's decoder ignores them.
public struct V1Frame: Sendable, Hashable {
    /// The largest frame accepted (voice messages carry base64 audio).
    public static let maximumSize = 16 << 20
    /// The largest counter: JSON numbers are exact up to 2^53.
    public static let maximumCounter: UInt64 = 1 << 53

    /// The sender's message counter.
    public var counter: UInt64
    /// The AES-GCM nonce (12 bytes).
    public var nonce: [UInt8]
    /// The ciphertext (as long as the plaintext).
    public var ciphertext: [UInt8]
    /// The GCM tag (16 bytes).
    public var tag: [UInt8]

    /// A frame from its parts.
    public init(counter: UInt64, nonce: [UInt8], ciphertext: [UInt8], tag: [UInt8]) {
        self.counter = counter
        self.nonce = nonce
        self.ciphertext = ciphertext
        self.tag = tag
    }

    /// Parses a frame.
    /// - Throws: ``V1Error/malformedFrame`` for anything but the app's JSON object with
    ///   valid fields, ``V1Error/unsupportedVersion`` when `v` is not 1.
    public init(json bytes: [UInt8]) throws(V1Error) {
        guard bytes.count <= Self.maximumSize,
            let value = try? JSONValue.parse(bytes, limits: .init(maxDepth: 2, maxContainerCount: 64)),
            let object = value.objectValue
        else { throw .malformedFrame }
        guard case .number(let version)? = object["v"] else { throw .malformedFrame }
        guard version == "1" else { throw .unsupportedVersion }
        guard case .number(let counterText)? = object["c"], let counter = UInt64(counterText), counter < Self.maximumCounter,
            case .string(let nonceText)? = object["n"], let nonce = Base64.decode(nonceText), nonce.count == 12,
            case .string(let dataText)? = object["d"], let ciphertext = Base64.decode(dataText),
            case .string(let tagText)? = object["t"], let tag = Base64.decode(tagText), tag.count == 16
        else { throw .malformedFrame }
        self.init(counter: counter, nonce: nonce, ciphertext: ciphertext, tag: tag)
    }

    /// The frame as the app's JSON object (`{"v":1,"c":…,"n":…,"d":…,"t":…}`).
    public func json() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + (ciphertext.count + 2) / 3 * 4)
        out.append(contentsOf: #"{"v":1,"c":"#.utf8)
        out.append(contentsOf: String(counter).utf8)
        out.append(contentsOf: #","n":""#.utf8)
        Base64.encode(nonce, into: &out)
        out.append(contentsOf: #"","d":""#.utf8)
        Base64.encode(ciphertext, into: &out)
        out.append(contentsOf: #"","t":""#.utf8)
        Base64.encode(tag, into: &out)
        out.append(contentsOf: #""}"#.utf8)
        return out
    }
}
