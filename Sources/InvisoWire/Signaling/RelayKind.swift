/// The client messages the server forwards to the other member of the room, with `from`
/// and `roomId` added and every other field untouched.
public enum RelayKind: String, Sendable, CaseIterable {
    /// `webrtc_offer {sdp}`.
    case webrtcOffer = "webrtc_offer"
    /// `webrtc_answer {sdp}`.
    case webrtcAnswer = "webrtc_answer"
    /// `ice_candidate {candidate: {candidate, sdpMLineIndex, sdpMid}}`.
    case iceCandidate = "ice_candidate"
    /// `key_exchange {publicKey, sessionId, timestamp?}` (E2EE v1 key exchange).
    case keyExchange = "key_exchange"
    /// `key_exchange_complete {sessionId}`.
    case keyExchangeComplete = "key_exchange_complete"
    /// `transport_candidates {candidates: […]}` (Inviso clients: direct-path addresses).
    case transportCandidates = "transport_candidates"

    /// Checks the fields this kind must carry (extra fields are allowed and kept): the
    /// object must read as this kind's ``payloadType``.
    func validate(_ object: JSONObject) throws(SignalingError) {
        _ = try payloadType.init(json: object)
    }
}
