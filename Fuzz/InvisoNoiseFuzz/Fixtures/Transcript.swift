internal import Crypto
internal import InvisoNoise
internal import InvisoFuzzSupport

/// A genuine handshake run once with fixed keys: every message, and both parties' states
/// before and after each one. Scenarios start from these states and feed them mutated
/// messages; ``finish(_:from:)`` then checks that a state which rejected a forgery can
/// still complete the genuine handshake byte for byte.
struct Transcript: Sendable {
    let noiseProtocol: NoiseProtocol
    /// The handshake messages in order; message `i` is written by the initiator when `i` is even.
    let messages: [[UInt8]]
    /// The payload carried by each message.
    let payloads: [[UInt8]]
    /// `initiatorStates[k]` is the initiator after `k` messages; likewise for the responder.
    let initiatorStates: [HandshakeState]
    let responderStates: [HandshakeState]
    /// `hashes[k]` is the handshake hash after `k` messages (equal on both sides).
    let hashes: [[UInt8]]
    /// The transports from `Split()`, before any transport message.
    let initiatorTransport: NoiseTransport
    let responderTransport: NoiseTransport
    /// The first transport message in each direction (`nil` where a one-way pattern has none).
    let firstToResponder: [UInt8]?
    let firstToInitiator: [UInt8]?

    static let transportPayload = Array("first transport message".utf8)

    static func payload(_ index: Int) -> [UInt8] {
        Array("handshake payload \(index)".utf8)
    }

    /// Creates both parties for `noiseProtocol` with the fixed keys, supplying every key
    /// the pattern's pre-messages require.
    static func parties(
        _ noiseProtocol: NoiseProtocol,
        prologue: [UInt8] = Array("inviso fuzz".utf8),
        keys: FuzzKeys
    ) throws(NoiseError) -> (initiator: HandshakeState, responder: HandshakeState) {
        let pattern = noiseProtocol.pattern
        let preSharedKeys = (0..<pattern.preSharedKeyCount).map(keys.preSharedKey)
        let responderPre = pattern.preMessage(of: .responder)
        let initiatorPre = pattern.preMessage(of: .initiator)
        let initiator = try HandshakeState(
            noiseProtocol, role: .initiator, prologue: prologue,
            localStatic: keys.initiatorStatic, localEphemeral: keys.initiatorEphemeral,
            remoteStatic: responderPre.contains(.s) ? keys.responderStatic.publicKey : nil,
            remoteEphemeral: responderPre.contains(.e) ? keys.responderEphemeral.publicKey : nil,
            preSharedKeys: preSharedKeys, ephemeralGenerator: keys.ephemeralGenerator)
        let responder = try HandshakeState(
            noiseProtocol, role: .responder, prologue: prologue,
            localStatic: keys.responderStatic, localEphemeral: keys.responderEphemeral,
            remoteStatic: initiatorPre.contains(.s) ? keys.initiatorStatic.publicKey : nil,
            remoteEphemeral: initiatorPre.contains(.e) ? keys.initiatorEphemeral.publicKey : nil,
            preSharedKeys: preSharedKeys, ephemeralGenerator: keys.ephemeralGenerator)
        return (initiator, responder)
    }

    /// Runs the handshake between two freshly initialised parties, checking as it goes.
    init(initiator startInitiator: HandshakeState, responder startResponder: HandshakeState) {
        var initiator = startInitiator
        var responder = startResponder
        let name = initiator.noiseProtocol.name
        invariant(initiator.handshakeHash == responder.handshakeHash, "\(name): initial hashes differ")
        var messages: [[UInt8]] = []
        var payloads: [[UInt8]] = []
        var initiatorStates = [initiator]
        var responderStates = [responder]
        var hashes = [initiator.handshakeHash]
        let count = initiator.noiseProtocol.pattern.messages.count
        for index in 0..<count {
            let payload = Self.payload(index)
            let message: [UInt8]
            let received: [UInt8]
            if index % 2 == 0 {
                message = mustSucceed("\(name): initiator writing message \(index)") { () throws(NoiseError) in
                    try initiator.writeMessage(payload)
                }
                received = mustSucceed("\(name): responder reading message \(index)") { () throws(NoiseError) in
                    try responder.readMessage(message)
                }
            } else {
                message = mustSucceed("\(name): responder writing message \(index)") { () throws(NoiseError) in
                    try responder.writeMessage(payload)
                }
                received = mustSucceed("\(name): initiator reading message \(index)") { () throws(NoiseError) in
                    try initiator.readMessage(message)
                }
            }
            invariant(received == payload, "\(name): payload \(index) changed in transit")
            invariant(initiator.handshakeHash == responder.handshakeHash, "\(name): hashes differ after message \(index)")
            messages.append(message)
            payloads.append(payload)
            initiatorStates.append(initiator)
            responderStates.append(responder)
            hashes.append(initiator.handshakeHash)
        }
        invariant(initiator.isComplete && responder.isComplete, "\(name): handshake did not complete")
        noiseProtocol = initiator.noiseProtocol
        self.messages = messages
        self.payloads = payloads
        self.initiatorStates = initiatorStates
        self.responderStates = responderStates
        self.hashes = hashes
        let initiatorTransport = mustSucceed("\(name): initiator transport") { () throws(NoiseError) in try initiator.transport() }
        let responderTransport = mustSucceed("\(name): responder transport") { () throws(NoiseError) in try responder.transport() }
        self.initiatorTransport = initiatorTransport
        self.responderTransport = responderTransport
        var sending = initiatorTransport
        firstToResponder = try? sending.encrypt(Self.transportPayload)
        sending = responderTransport
        firstToInitiator = try? sending.encrypt(Self.transportPayload)
        invariant((firstToInitiator == nil) == noiseProtocol.pattern.isOneWay, "\(name): one-way transport mismatch")
    }

    /// Who writes message `index`.
    func writer(of index: Int) -> NoiseRole {
        index % 2 == 0 ? .initiator : .responder
    }

    /// The states of `role`: `[k]` after `k` messages.
    func states(of role: NoiseRole) -> [HandshakeState] {
        role == .initiator ? initiatorStates : responderStates
    }

    /// Plays the rest of the genuine handshake from `start`, which must be equivalent to
    /// the genuine state of its role after `index` messages: every message it writes must
    /// equal the recorded one (so its chaining key and cipher state are intact, not just
    /// `h`), every recorded message it reads must be accepted, and the resulting transport
    /// must exchange the recorded first transport messages.
    func finish(_ start: HandshakeState, from index: Int) {
        var state = start
        let name = noiseProtocol.name
        let role = state.role
        invariant(state.nextMessageIndex == index, "\(name): continuing from message \(state.nextMessageIndex), expected \(index)")
        for next in index..<messages.count {
            if writer(of: next) == role {
                let written = mustSucceed("\(name): \(role) writing genuine message \(next)") { () throws(NoiseError) in
                    try state.writeMessage(payloads[next])
                }
                invariant(written == messages[next], "\(name): \(role) wrote a different message \(next)")
            } else {
                let payload = mustSucceed("\(name): \(role) reading genuine message \(next)") { () throws(NoiseError) in
                    try state.readMessage(messages[next])
                }
                invariant(payload == payloads[next], "\(name): \(role) read a different payload \(next)")
            }
            invariant(state.handshakeHash == hashes[next + 1], "\(name): \(role) hash differs after message \(next)")
        }
        invariant(state.isComplete, "\(name): \(role) did not complete")
        var transport = mustSucceed("\(name): \(role) transport") { () throws(NoiseError) in try state.transport() }
        let incoming = role == .initiator ? firstToInitiator : firstToResponder
        let outgoing = role == .initiator ? firstToResponder : firstToInitiator
        if let incoming {
            let plaintext = mustSucceed("\(name): \(role) decrypting the genuine transport message") { () throws(NoiseError) in
                try transport.decrypt(incoming)
            }
            invariant(plaintext == Self.transportPayload, "\(name): \(role) transport plaintext differs")
        } else {
            invariant(transport.receiver == nil, "\(name): \(role) can receive in a one-way pattern")
        }
        if let outgoing {
            let sealed = mustSucceed("\(name): \(role) encrypting") { () throws(NoiseError) in
                try transport.encrypt(Self.transportPayload)
            }
            invariant(sealed == outgoing, "\(name): \(role) transport ciphertext differs")
        } else {
            invariant(transport.sender == nil, "\(name): \(role) can send in a one-way pattern")
        }
    }
}
