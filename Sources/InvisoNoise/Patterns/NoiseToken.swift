/// A token of a Noise message pattern (rev 34 §7).
///
/// DH tokens name the initiator's key first: `es` is DH(initiator ephemeral,
/// responder static), whoever sends it.
public enum NoiseToken: String, Sendable, Hashable, CaseIterable {
    /// Send or receive an ephemeral public key.
    case e
    /// Send or receive a static public key (encrypted once a key is set).
    case s
    /// DH(initiator ephemeral, responder ephemeral).
    case ee
    /// DH(initiator ephemeral, responder static).
    case es
    /// DH(initiator static, responder ephemeral).
    case se
    /// DH(initiator static, responder static).
    case ss
    /// Mix the next pre-shared key (`MixKeyAndHash`).
    case psk

    /// The same DH with the parties' letters exchanged (`es` ↔ `se`); used when a pattern
    /// written for Alice as initiator is re-read with Bob as initiator (`fallback`).
    var swappingParties: NoiseToken {
        switch self {
        case .es: .se
        case .se: .es
        default: self
        }
    }
}
