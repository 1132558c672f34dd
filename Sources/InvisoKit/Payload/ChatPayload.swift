import InvisoCrypto
public import InvisoStore
import InvisoWire

/// What one decrypted message carries, in the app's encoding (the same on both protocol
/// versions): a chat text, or a JSON object told apart by its `type`.
public enum ChatPayload: Sendable, Hashable {
    /// A chat text.
    case text(String)
    /// A shared location; `timestamp` in milliseconds since the epoch.
    case location(latitude: Double, longitude: Double, accuracy: Double?, timestamp: Int64)
    /// A voice note: duration in seconds, the waveform, base64 m4a audio, timestamp in ms.
    case voice(duration: Double, waveform: [Double], audioData: String, timestamp: Int64)
    /// A proposal to switch the session's message lifetime; `proposedAt` in seconds since the epoch.
    case lifetimeProposal(sessionID: String, lifetime: MessageLifetime, proposedAt: Double)
    /// The peer accepted a lifetime; `acceptedAt` in seconds since the epoch.
    case lifetimeAccept(sessionID: String, lifetime: MessageLifetime, acceptedAt: Double)
    /// The peer rejected a lifetime proposal.
    case lifetimeReject(sessionID: String, reason: String?)
    /// The name the sender chose to show its peer (Inviso v2 only: the app does not know
    /// this type and would show it as text). 1…64 characters.
    case profile(name: String)
    /// A file transfer's control message (Inviso v2 only; ``FileControl``).
    case file(FileControl)
    /// The sender saves this peer as a contact (Inviso v2, verified sessions only):
    /// its long-term identity key (32 bytes, the Noise static key its calls use) and 32
    /// random bytes for the contact secret (``ContactCall/secret(ourIdentity:ourNonce:theirIdentity:theirNonce:)``).
    case contact(identity: [UInt8], nonce: [UInt8])

    /// Whether `plaintext` is a file transfer's control message (``file(_:)``), without
    /// parsing it: its JSON starts with its type.
    static func isFileControl(_ plaintext: [UInt8]) -> Bool {
        plaintext.starts(with: fileControlPrefix)
    }

    private static let fileControlPrefix = Array(#"{"type":"file_"#.utf8)

    /// The longest name a ``profile(name:)`` carries.
    public static let maxProfileName = 64

    /// Reads a decrypted message. Text that is not one of the app's JSON objects, or an
    /// object with an unknown or incomplete `type`, is shown as text, as the app does.
    public init(plaintext: [UInt8]) {
        let text = String(decoding: plaintext, as: UTF8.self)
        guard plaintext.first == UInt8(ascii: "{"), let object = try? JSONValue.parse(plaintext).objectValue,
            let type = object["type"]?.stringValue, let payload = Self.decode(type: type, object)
        else {
            self = .text(text)
            return
        }
        self = payload
    }

    private static func decode(type: String, _ object: JSONObject) -> ChatPayload? {
        func number(_ key: String) -> Double? {
            if case .number(let text)? = object[key] { Double(text) } else { nil }
        }
        func string(_ key: String) -> String? { object[key]?.stringValue }
        switch type {
        case "location":
            guard let latitude = number("latitude"), let longitude = number("longitude"), let timestamp = number("timestamp"),
                (-90...90).contains(latitude), (-180...180).contains(longitude)
            else { return nil }
            return .location(latitude: latitude, longitude: longitude, accuracy: number("accuracy"), timestamp: Int64(timestamp))
        case "voice":
            guard let duration = number("duration"), let audio = string("audioData"), let timestamp = number("timestamp"),
                let samples = object["waveform"]?.arrayValue
            else { return nil }
            let waveform = samples.compactMap { sample -> Double? in
                if case .number(let text) = sample { Double(text) } else { nil }
            }
            guard waveform.count == samples.count else { return nil }
            return .voice(duration: duration, waveform: waveform, audioData: audio, timestamp: Int64(timestamp))
        case "lifetime_proposal":
            guard let session = string("sessionId"), let lifetime = string("lifetime").flatMap(MessageLifetime.init(rawValue:)),
                let at = number("proposedAt")
            else { return nil }
            return .lifetimeProposal(sessionID: session, lifetime: lifetime, proposedAt: at)
        case "lifetime_accept":
            guard let session = string("sessionId"), let lifetime = string("lifetime").flatMap(MessageLifetime.init(rawValue:)),
                let at = number("acceptedAt")
            else { return nil }
            return .lifetimeAccept(sessionID: session, lifetime: lifetime, acceptedAt: at)
        case "lifetime_reject":
            guard let session = string("sessionId") else { return nil }
            return .lifetimeReject(sessionID: session, reason: string("reason"))
        case let type where FileControl.types.contains(type):
            return FileControl(type: type, object).map(ChatPayload.file)
        case "contact":
            guard let identity = string("identity").flatMap(Hex.decode), identity.count == 32,
                let nonce = string("nonce").flatMap(Hex.decode), nonce.count == 32
            else { return nil }
            return .contact(identity: identity, nonce: nonce)
        case "profile":
            guard let name = string("name"), !name.isEmpty, name.count <= maxProfileName else { return nil }
            return .profile(name: name)
        default:
            return nil
        }
    }

    /// The plaintext to encrypt.
    public var plaintext: [UInt8] {
        switch self {
        case .text(let text):
            return Array(text.utf8)
        case .location(let latitude, let longitude, let accuracy, let timestamp):
            var fields: [(String, JSONValue)] = [
                ("type", .string("location")), ("latitude", Self.number(latitude)), ("longitude", Self.number(longitude)),
            ]
            if let accuracy { fields.append(("accuracy", Self.number(accuracy))) }
            fields.append(("timestamp", .number(String(timestamp))))
            return Self.serialize(fields)
        case .voice(let duration, let waveform, let audio, let timestamp):
            return Self.serialize([
                ("type", .string("voice")), ("duration", Self.number(duration)), ("waveform", .array(waveform.map(Self.number))),
                ("audioData", .string(audio)), ("timestamp", .number(String(timestamp))),
            ])
        case .lifetimeProposal(let session, let lifetime, let at):
            return Self.serialize([
                ("type", .string("lifetime_proposal")), ("sessionId", .string(session)), ("lifetime", .string(lifetime.rawValue)),
                ("proposedAt", Self.number(at)),
            ])
        case .lifetimeAccept(let session, let lifetime, let at):
            return Self.serialize([
                ("type", .string("lifetime_accept")), ("sessionId", .string(session)), ("lifetime", .string(lifetime.rawValue)),
                ("acceptedAt", Self.number(at)),
            ])
        case .lifetimeReject(let session, let reason):
            var fields: [(String, JSONValue)] = [("type", .string("lifetime_reject")), ("sessionId", .string(session))]
            if let reason { fields.append(("reason", .string(reason))) }
            return Self.serialize(fields)
        case .profile(let name):
            return Self.serialize([("type", .string("profile")), ("name", .string(name))])
        case .file(let control):
            return Self.serialize(control.fields)
        case .contact(let identity, let nonce):
            return Self.serialize([
                ("type", .string("contact")), ("identity", .string(Hex.encode(identity))), ("nonce", .string(Hex.encode(nonce))),
            ])
        }
    }

    private static func number(_ value: Double) -> JSONValue {
        guard value.isFinite else { return .number("0") }
        if value == value.rounded(), abs(value) < 1e15 { return .number(String(Int64(value))) }
        return .number("\(value)")
    }

    private static func serialize(_ fields: [(String, JSONValue)]) -> [UInt8] {
        JSONValue.object(JSONObject(fields)).serialized()
    }
}
