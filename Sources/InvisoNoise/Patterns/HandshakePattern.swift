/// A Noise handshake pattern in initiator-first form: pre-messages plus the message
/// patterns, where even-indexed messages are written by the initiator.
public struct HandshakePattern: Sendable, Hashable {
    /// The full pattern name including modifiers, e.g. `XXpsk3` or `XXfallback`.
    public let name: String
    /// Public keys the initiator's peer knows before the handshake (`e`, `s` or `e, s`).
    public let initiatorPreMessage: [NoiseToken]
    /// Public keys the initiator knows of the responder before the handshake.
    public let responderPreMessage: [NoiseToken]
    /// The message patterns in order; message `i` is written by the initiator when `i` is even.
    public let messages: [[NoiseToken]]

    /// Whether only the initiator sends (patterns `N`, `K`, `X` and their modifications).
    public let isOneWay: Bool

    /// Whether any message contains a `psk` token.
    public var isPSKHandshake: Bool { messages.contains { $0.contains(.psk) } }

    /// How many pre-shared keys the handshake consumes.
    public var preSharedKeyCount: Int { messages.reduce(0) { $0 + $1.filter { $0 == .psk }.count } }

    /// Whether the party in `role` needs its own static key pair.
    public func needsLocalStatic(_ role: NoiseRole) -> Bool {
        let initiator = role == .initiator
        if (initiator ? initiatorPreMessage : responderPreMessage).contains(.s) { return true }
        for (index, message) in messages.enumerated() {
            let sender = index % 2 == 0 ? NoiseRole.initiator : .responder
            if sender == role && message.contains(.s) { return true }
            for token in message {
                switch token {
                case .ss: return true
                case .se where initiator, .es where !initiator: return true
                default: continue
                }
            }
        }
        return false
    }

    /// The pre-message the party in `role` sends (its keys the peer knows in advance).
    public func preMessage(of role: NoiseRole) -> [NoiseToken] {
        role == .initiator ? initiatorPreMessage : responderPreMessage
    }

    package init(name: String, initiatorPreMessage: [NoiseToken], responderPreMessage: [NoiseToken], messages: [[NoiseToken]], isOneWay: Bool) {
        self.name = name
        self.initiatorPreMessage = initiatorPreMessage
        self.responderPreMessage = responderPreMessage
        self.messages = messages
        self.isOneWay = isOneWay
    }
}

// MARK: - Modifiers

extension HandshakePattern {
    /// Applies the `pskN` modifier: `psk0` opens the first message, `pskN` closes message N.
    func addingPSK(_ position: Int, modifier: String) throws(NoiseError) -> HandshakePattern {
        var messages = self.messages
        if position == 0 {
            messages[0].insert(.psk, at: 0)
        } else {
            guard position <= messages.count else {
                throw NoiseError(.invalidProtocolName, "\(modifier) is beyond the last message")
            }
            messages[position - 1].append(.psk)
        }
        return HandshakePattern(name: name + (name == baseName ? "" : "+") + modifier, initiatorPreMessage: initiatorPreMessage,
                                responderPreMessage: responderPreMessage, messages: messages, isOneWay: isOneWay)
    }

    /// Applies the `fallback` modifier (rev 34 §10.2): Alice's first message becomes her
    /// pre-message and Bob becomes the initiator of the rest. Tokens are rewritten so that
    /// their first letter keeps naming the (new) initiator's key.
    func addingFallback(modifier: String) throws(NoiseError) -> HandshakePattern {
        guard !isOneWay, messages.count >= 2, initiatorPreMessage.isEmpty,
              messages[0] == [.e] || messages[0] == [.s] || messages[0] == [.e, .s]
        else {
            throw NoiseError(.invalidPattern, "fallback needs a first message of e, s or e, s")
        }
        return HandshakePattern(
            name: name + (name == baseName ? "" : "+") + modifier,
            initiatorPreMessage: responderPreMessage.map(\.swappingParties),
            responderPreMessage: messages[0],
            messages: messages.dropFirst().map { $0.map(\.swappingParties) },
            isOneWay: false)
    }

    /// The name before any modifier (`XX` for `XXpsk3`).
    var baseName: String { String(name.prefix { $0.isUppercase || $0.isNumber }) }
}
