// Typed bodies of the messages members relay to each other through the server. Each is
// `Codable` with the iOS app's field names, validates a parsed object with the error the
// server sends back (`init(json:)`), and becomes a ``ClientMessage`` with ``message``.
// The server relays the sender's object as it came, unknown fields included; these types
// read the fields they know and ignore the rest.

/// The body of a relayed message of one ``RelayKind``.
public protocol RelayPayload: Codable, Sendable, Equatable {
    /// The message type.
    static var kind: RelayKind { get }
    /// Validates a parsed message (its `type` is not checked here).
    init(json: JSONObject) throws(SignalingError)
    /// The fields after `type`, in the app's order.
    var fields: [(String, JSONValue)] { get }
}

extension RelayPayload {
    /// The client message that sends this payload.
    public var message: ClientMessage {
        .relay(Self.kind, JSONObject([("type", .string(Self.kind.rawValue))] + fields))
    }
}

/// A payload that is one session description: `webrtc_offer` and `webrtc_answer`.
public protocol SessionDescriptionPayload: RelayPayload {
    /// The session description.
    var sdp: String { get }
    init(sdp: String)
}

extension SessionDescriptionPayload {
    public init(json: JSONObject) throws(SignalingError) {
        self.init(sdp: try RelayField.string(json, "sdp"))
    }

    public var fields: [(String, JSONValue)] { [("sdp", .string(sdp))] }
}

/// `webrtc_offer {sdp}`.
public struct WebRTCOffer: SessionDescriptionPayload {
    public static let kind = RelayKind.webrtcOffer
    public var sdp: String

    public init(sdp: String) { self.sdp = sdp }
}

/// `webrtc_answer {sdp}`.
public struct WebRTCAnswer: SessionDescriptionPayload {
    public static let kind = RelayKind.webrtcAnswer
    public var sdp: String

    public init(sdp: String) { self.sdp = sdp }
}

/// `ice_candidate {candidate: {candidate, sdpMLineIndex, sdpMid}}`.
public struct ICECandidateMessage: RelayPayload {
    public static let kind = RelayKind.iceCandidate

    /// One ICE candidate as WebRTC describes it.
    public struct Candidate: Codable, Sendable, Equatable {
        /// The candidate line (`candidate:842163049 1 udp …`).
        public var candidate: String
        /// The media line index, when known.
        public var sdpMLineIndex: Int?
        /// The media stream id, when known.
        public var sdpMid: String?

        public init(candidate: String, sdpMLineIndex: Int?, sdpMid: String?) {
            self.candidate = candidate
            self.sdpMLineIndex = sdpMLineIndex
            self.sdpMid = sdpMid
        }
    }

    /// The candidate.
    public var candidate: Candidate

    public init(candidate: Candidate) { self.candidate = candidate }

    public init(json: JSONObject) throws(SignalingError) {
        guard let object = json["candidate"]?.objectValue, let line = object["candidate"]?.stringValue else {
            throw .missingField("candidate")
        }
        let index = object["sdpMLineIndex"]
        guard index == nil || index == .null || index?.integerValue != nil else { throw .missingField("sdpMLineIndex") }
        let mid = object["sdpMid"]
        guard mid == nil || mid == .null || mid?.stringValue != nil else { throw .missingField("sdpMid") }
        candidate = Candidate(candidate: line, sdpMLineIndex: index?.integerValue, sdpMid: mid?.stringValue)
    }

    public var fields: [(String, JSONValue)] {
        [
            (
                "candidate",
                .object(
                    JSONObject([
                        ("candidate", .string(candidate.candidate)),
                        ("sdpMLineIndex", candidate.sdpMLineIndex.map(JSONValue.integer) ?? .null),
                        ("sdpMid", candidate.sdpMid.map(JSONValue.string) ?? .null),
                    ]))
            )
        ]
    }
}

/// `key_exchange {publicKey, sessionId, timestamp?}`: the app's v1 key exchange.
public struct KeyExchange: RelayPayload {
    public static let kind = RelayKind.keyExchange
    /// The sender's public key (base64 of the raw 32-byte X25519 key in the app).
    public var publicKey: String
    /// The session the key belongs to (the app sends the room id).
    public var sessionId: String
    /// Seconds since 1970 with a fraction (the app's `Date().timeIntervalSince1970`).
    public var timestamp: Double?

    public init(publicKey: String, sessionId: String, timestamp: Double? = nil) {
        self.publicKey = publicKey
        self.sessionId = sessionId
        self.timestamp = timestamp
    }

    public init(json: JSONObject) throws(SignalingError) {
        publicKey = try RelayField.string(json, "publicKey")
        sessionId = try RelayField.string(json, "sessionId")
        timestamp = try RelayField.optionalNumber(json, "timestamp")
    }

    public var fields: [(String, JSONValue)] {
        var fields: [(String, JSONValue)] = [("publicKey", .string(publicKey)), ("sessionId", .string(sessionId))]
        if let timestamp { fields.append(("timestamp", RelayField.number(timestamp))) }
        return fields
    }
}

/// `key_exchange_complete {sessionId, timestamp?}`.
public struct KeyExchangeComplete: RelayPayload {
    public static let kind = RelayKind.keyExchangeComplete
    /// The session whose key exchange finished.
    public var sessionId: String
    /// Seconds since 1970 with a fraction.
    public var timestamp: Double?

    public init(sessionId: String, timestamp: Double? = nil) {
        self.sessionId = sessionId
        self.timestamp = timestamp
    }

    public init(json: JSONObject) throws(SignalingError) {
        sessionId = try RelayField.string(json, "sessionId")
        timestamp = try RelayField.optionalNumber(json, "timestamp")
    }

    public var fields: [(String, JSONValue)] {
        var fields: [(String, JSONValue)] = [("sessionId", .string(sessionId))]
        if let timestamp { fields.append(("timestamp", RelayField.number(timestamp))) }
        return fields
    }
}

/// `transport_candidates {candidates: [{transport?, host, port}]}`: where an Inviso client
/// listens for a direct connection (`transport` defaults to `tcp`).
public struct TransportCandidates: RelayPayload {
    public static let kind = RelayKind.transportCandidates

    /// One address the sender accepts direct connections on.
    public struct Candidate: Codable, Sendable, Equatable {
        /// The transport (`tcp`, the default when the field is absent).
        public var transport: String
        /// An IP address or host name.
        public var host: String
        /// The port, 1…65535.
        public var port: Int

        public init(transport: String = "tcp", host: String, port: Int) {
            self.transport = transport
            self.host = host
            self.port = port
        }

        /// Decodes a candidate; a missing `transport` means `tcp`.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            transport = try container.decodeIfPresent(String.self, forKey: .transport) ?? "tcp"
            host = try container.decode(String.self, forKey: .host)
            port = try container.decode(Int.self, forKey: .port)
        }
    }

    /// The most candidates one message may carry.
    public static let maxCandidates = 32

    /// The candidates, best first.
    public var candidates: [Candidate]

    public init(candidates: [Candidate]) { self.candidates = candidates }

    public init(json: JSONObject) throws(SignalingError) {
        guard let array = json["candidates"]?.arrayValue, array.count <= Self.maxCandidates else {
            throw .missingField("candidates")
        }
        var candidates: [Candidate] = []
        for element in array {
            guard let object = element.objectValue, object["transport"] == nil || object["transport"]?.stringValue != nil,
                let host = object["host"]?.stringValue, !host.isEmpty, host.utf8.count <= 255,
                let port = object["port"]?.integerValue, (1...65_535).contains(port)
            else { throw .missingField("candidates") }
            candidates.append(Candidate(transport: object["transport"]?.stringValue ?? "tcp", host: host, port: port))
        }
        self.candidates = candidates
    }

    public var fields: [(String, JSONValue)] {
        [
            (
                "candidates",
                .array(
                    candidates.map {
                        .object(
                            JSONObject([
                                ("transport", .string($0.transport)), ("host", .string($0.host)), ("port", .integer($0.port)),
                            ]))
                    })
            )
        ]
    }
}

/// Field readers shared by the payloads.
enum RelayField {
    static func string(_ json: JSONObject, _ name: String) throws(SignalingError) -> String {
        guard let value = json[name]?.stringValue else { throw .missingField(name) }
        return value
    }

    /// An optional finite number (absent or `null` → `nil`).
    static func optionalNumber(_ json: JSONObject, _ name: String) throws(SignalingError) -> Double? {
        switch json[name] {
        case nil, .null?: return nil
        case .number(let literal)?:
            guard let value = Double(literal), value.isFinite else { throw .missingField(name) }
            return value
        default: throw .missingField(name)
        }
    }

    /// A number as JSON: integral values without a fraction (`1700000000000`), others as
    /// Swift's shortest round-tripping text.
    static func number(_ value: Double) -> JSONValue {
        if value.rounded() == value, abs(value) < 9.007_199_254_740_992e15 { return .integer(Int(value)) }
        return .number(String(value))
    }
}

extension RelayKind {
    /// The payload type of this kind.
    public var payloadType: any RelayPayload.Type {
        switch self {
        case .webrtcOffer: WebRTCOffer.self
        case .webrtcAnswer: WebRTCAnswer.self
        case .iceCandidate: ICECandidateMessage.self
        case .keyExchange: KeyExchange.self
        case .keyExchangeComplete: KeyExchangeComplete.self
        case .transportCandidates: TransportCandidates.self
        }
    }
}

// MARK: - Decoding through the validating parsers

// Every payload decodes through its `init(json:)` (``ValidatedJSONDecodable``), so a
// `JSONDecoder` applies exactly the parser's validation.
extension WebRTCOffer: ValidatedJSONDecodable {}
extension WebRTCAnswer: ValidatedJSONDecodable {}
extension ICECandidateMessage: ValidatedJSONDecodable {}
extension KeyExchange: ValidatedJSONDecodable {}
extension KeyExchangeComplete: ValidatedJSONDecodable {}
extension TransportCandidates: ValidatedJSONDecodable {}
