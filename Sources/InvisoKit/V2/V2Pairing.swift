import InvisoCrypto
public import InvisoNoise
import InvisoSignal

/// Inviso v2 pairing as a value-type state machine without I/O: CPace on the invite's
/// words, then `Noise_XXpsk3_25519_ChaChaPoly_SHA256` keyed with CPace's result, then a
/// Double Ratchet ``V2Session`` seeded from the handshake (`docs/protocol.md`, "v2").
///
/// ```
/// creator (CPace/Noise initiator)                 joiner (responder)
/// start:  0x01 CPace(Ya)              ⇄           start:  0x01 CPace(Yb)
/// on Yb:  0x02 msg1 (e)               →
///                                     ←           on msg1: 0x02 msg2 (e, ee, s, es; ratchet key)
/// on msg2: 0x02 msg3 (s, se, psk)     →           [creator: awaitingConfirmation, may seal]
///                                     ←           on msg3: 0x03 confirmation; established
/// on a ratchet frame that opens: established
/// ```
///
/// Feed every frame from the peer to ``receive(_:using:)`` and carry out the returned
/// ``Action``s in order. The rules:
///
/// - A frame that does not belong to the current step (a duplicate, a reordered or
///   reflected frame, a handshake frame of another step, a ratchet frame before the
///   handshake) is refused with a thrown ``V2Error`` and changes nothing, so the genuine
///   frame still works afterwards.
/// - A frame of the expected step that fails — a CPace share that is malformed or of low
///   order, a Noise message that does not authenticate (a wrong secret shows up as the
///   joiner failing to read msg3; a key or message substituted by the server fails the
///   same way), a bad ratchet key — fails the pairing: ``Action/failed(_:)`` after
///   ``Action/send(_:)`` of the abort frame `0x7F 0x01`. An abort from the peer fails it
///   too (``V2Error/pairingFailed``). There is one attempt: a failed pairing stays failed.
/// - The creator is established only when a ratchet frame from the joiner opens (the
///   joiner's confirmation, or a message), which proves the joiner derived the same keys.
///
/// The description and reflection show only the role and state.
public struct V2Pairing: Sendable {
    /// Which side of the room this is.
    public enum Role: Sendable, Hashable {
        /// The room's creator: CPace initiator and Noise initiator.
        case creator
        /// The side that joined with the invite: CPace responder and Noise responder.
        case joiner
    }

    /// Where the pairing is.
    public enum State: Sendable, Hashable {
        /// Created; ``start()`` sends our CPace message.
        case ready
        /// Our CPace message is out; waiting for the peer's.
        case awaitingCPace
        /// The Noise handshake is under way.
        case handshaking
        /// Creator only: the handshake is complete and the session can seal
        /// (``seal(_:)``), but the joiner has not proved it has the keys yet.
        case awaitingConfirmation
        /// The session was handed out in ``Action/established(_:)``; the pairing is done.
        case established
        /// The pairing failed for the given reason; it takes no more frames.
        case failed(V2Error)
    }

    /// What the driver must do after an input, in order.
    public enum Action: Sendable {
        /// Send this frame to the peer.
        case send([UInt8])
        /// The pairing succeeded: use this session from now on.
        case established(V2Session)
        /// A message that arrived with (instead of) the joiner's confirmation and opened.
        case received([UInt8])
        /// The pairing failed; any abort frame to send came just before.
        case failed(V2Error)
    }

    private enum Phase: Sendable {
        case ready(CPace.Party)
        case awaitingCPace(CPace.Party)
        case creatorAwaitingMessage2(HandshakeState)
        case joinerAwaitingMessage1(HandshakeState)
        case joinerAwaitingMessage3(HandshakeState, ratchetKey: ECKeyPair)
        case awaitingConfirmation(V2Session)
        case established
        case failed(V2Error)
    }

    /// Our side.
    public let role: Role
    /// The room id the server gave, bound into CPace, the psk and the prologue.
    public let roomID: String
    private let staticKey: NoiseKeyPair
    private var phase: Phase

    /// A pairing for one room.
    ///
    /// - Parameters:
    ///   - role: ``Role/creator`` for the room's creator, ``Role/joiner`` for the invitee.
    ///   - invite: the invite; only its words are used (the join code only found the room).
    ///   - roomID: the room id from the server (`{roomid}`): 1…255 bytes of UTF-8, no NUL.
    ///   - staticKey: our per-session Noise static key pair, our identity in this session
    ///     (its public key is what the peer pins and the safety number covers).
    ///   - generator: CPace's scalar comes from here; a cryptographically secure
    ///     generator outside tests.
    /// - Throws: ``V2Error/invalidRoomID``.
    public init(
        role: Role, invite: Invite, roomID: String, staticKey: NoiseKeyPair,
        using generator: inout some RandomNumberGenerator
    ) throws(V2Error) {
        let sid = Array(roomID.utf8)
        guard (1...255).contains(sid.count), !sid.contains(0) else { throw .invalidRoomID }
        let party: CPace.Party
        do {
            party = try CPace.Party(
                role: role == .creator ? .initiator : .responder, prs: invite.passwordRelatedString,
                ci: V2KeySchedule.label, sid: sid, using: &generator)
        } catch {
            // A low-order generator: a hash output with negligible probability.
            throw V2Error(.pairingFailed, "CPace generator")
        }
        self.role = role
        self.roomID = roomID
        self.staticKey = staticKey
        self.phase = .ready(party)
    }

    /// ``init(role:invite:roomID:staticKey:using:)`` with the system's secure generator.
    public init(role: Role, invite: Invite, roomID: String, staticKey: NoiseKeyPair) throws(V2Error) {
        var generator = SystemRandomNumberGenerator()
        try self.init(role: role, invite: invite, roomID: roomID, staticKey: staticKey, using: &generator)
    }

    /// Where the pairing is.
    public var state: State {
        switch phase {
        case .ready: .ready
        case .awaitingCPace: .awaitingCPace
        case .creatorAwaitingMessage2, .joinerAwaitingMessage1, .joinerAwaitingMessage3: .handshaking
        case .awaitingConfirmation: .awaitingConfirmation
        case .established: .established
        case .failed(let error): .failed(error)
        }
    }

    /// Starts the pairing: both sides send their CPace message at once. Does nothing
    /// (returns no action) once started.
    public mutating func start() -> [Action] {
        guard case .ready(let party) = phase else { return [] }
        phase = .awaitingCPace(party)
        return [.send(V2FrameType.cpace.frame(party.message))]
    }

    /// Handles one frame from the peer.
    ///
    /// - Parameters:
    ///   - frame: the relay frame, type byte first.
    ///   - generator: where the Noise ephemeral key and the ratchet keys come from.
    /// - Returns: what to do, in order (see ``Action``). A failure of the pairing is
    ///   returned as ``Action/failed(_:)``, not thrown.
    /// - Throws: when the frame is refused and nothing changed: ``V2Error/malformedFrame``
    ///   (empty, unknown type, or an abort frame of the wrong length),
    ///   ``V2Error/unexpectedFrame`` (a frame of another step), ``V2Error/pairingFailed``
    ///   (the pairing has failed); in ``State/awaitingConfirmation`` also the errors of
    ///   ``V2Session/open(_:using:)`` for a ratchet frame that does not open.
    public mutating func receive(
        _ frame: [UInt8], using generator: inout some RandomNumberGenerator
    ) throws(V2Error) -> [Action] {
        guard let type = V2FrameType(frame: frame) else { throw .malformedFrame }
        let body = Array(frame.dropFirst())
        switch (phase, type) {
        case (.failed, _):
            throw .pairingFailed
        case (.ready, _), (.established, _):
            throw V2Error(.unexpectedFrame, "type \(type.rawValue)")
        case (_, .abort):
            guard body.count == 1 else { throw .malformedFrame }
            return fail(.pairingFailed, notifyPeer: false)
        case (.awaitingCPace(var party), .cpace):
            guard body != party.message else { throw V2Error(.unexpectedFrame, "our own CPace message") }
            let output: CPace.Output
            do {
                output = try party.receive(body)
            } catch {
                return fail(error == .malformedMessage ? .malformedFrame : .invalidPeerKey)
            }
            return startHandshake(output, using: &generator)
        case (.creatorAwaitingMessage2(let handshake), .handshake):
            try checkLength(body, message: 1)
            return creatorRead(message2: body, handshake, using: &generator)
        case (.joinerAwaitingMessage1(let handshake), .handshake):
            try checkLength(body, message: 0)
            return joinerRead(message1: body, handshake, using: &generator)
        case (.joinerAwaitingMessage3(let handshake, let ratchetKey), .handshake):
            try checkLength(body, message: 2)
            return joinerRead(message3: body, handshake, ratchetKey: ratchetKey)
        case (.awaitingConfirmation(let session), .ratchet):
            let (kind, plaintext, state) = try V2Session.decrypt(frame, with: session.state, using: &generator)
            phase = .established
            let established = V2Session(role: session.role, state: state)
            return kind == .message ? [.established(established), .received(plaintext)] : [.established(established)]
        default:
            throw V2Error(.unexpectedFrame, "type \(type.rawValue)")
        }
    }

    /// ``receive(_:using:)`` with the system's secure generator.
    public mutating func receive(_ frame: [UInt8]) throws(V2Error) -> [Action] {
        var generator = SystemRandomNumberGenerator()
        return try receive(frame, using: &generator)
    }

    /// Creator only, while ``State/awaitingConfirmation``: seals a message with the
    /// session the handshake gave, before the joiner's confirmation arrives. The message
    /// is part of the session that ``Action/established(_:)`` later hands out.
    ///
    /// - Throws: ``V2Error/notEstablished`` in any other state.
    public mutating func seal(_ plaintext: [UInt8]) throws(V2Error) -> [UInt8] {
        guard case .awaitingConfirmation(var session) = phase else { throw .notEstablished }
        let frame = session.seal(plaintext)
        phase = .awaitingConfirmation(session)
        return frame
    }

    // MARK: Steps

    /// After CPace: the psk and prologue, then the Noise handshake; the creator writes msg1.
    private mutating func startHandshake(_ output: CPace.Output, using generator: inout some RandomNumberGenerator) -> [Action] {
        let roomBytes = Array(roomID.utf8)
        let ephemeral = Self.keyPair(using: &generator)
        var handshake: HandshakeState
        do {
            handshake = try HandshakeState(
                V2KeySchedule.noiseProtocol, role: role == .creator ? .initiator : .responder,
                prologue: V2KeySchedule.prologue(roomID: roomBytes, sessionIDOutput: output.sessionIDOutput),
                localStatic: staticKey, localEphemeral: ephemeral,
                preSharedKeys: [V2KeySchedule.preSharedKey(isk: output.intermediateSessionKey, roomID: roomBytes)])
        } catch {
            preconditionFailure("the XXpsk3 handshake refused its fixed parameters")
        }
        guard role == .creator else {
            phase = .joinerAwaitingMessage1(handshake)
            return []
        }
        let message1: [UInt8]
        do {
            message1 = try handshake.writeMessage()
        } catch {
            return fail(V2Error(noise: error))
        }
        phase = .creatorAwaitingMessage2(handshake)
        return [.send(V2FrameType.handshake.frame(message1))]
    }

    /// Creator: reads msg2 (its payload is the joiner's ratchet key), writes msg3 and
    /// seeds the session as Signal's Alice.
    private mutating func creatorRead(
        message2: [UInt8], _ handshake: HandshakeState, using generator: inout some RandomNumberGenerator
    ) -> [Action] {
        var handshake = handshake
        let payload: [UInt8]
        let message3: [UInt8]
        do {
            payload = try handshake.readMessage(message2)
            message3 = try handshake.writeMessage()
        } catch {
            return fail(V2Error(noise: error))
        }
        guard let theirRatchetKey = try? ECPublicKey(serialized: payload) else { return fail(.invalidPeerKey) }
        let state: SessionState
        do {
            state = try SessionInitialization.initializeAlice(
                seeded: try seed(handshake), theirRatchetKey: theirRatchetKey, using: &generator)
        } catch {
            return fail(.invalidPeerKey)
        }
        phase = .awaitingConfirmation(V2Session(role: role, state: state))
        return [.send(V2FrameType.handshake.frame(message3))]
    }

    /// Joiner: reads msg1 and answers msg2 carrying a fresh ratchet public key.
    private mutating func joinerRead(
        message1: [UInt8], _ handshake: HandshakeState, using generator: inout some RandomNumberGenerator
    ) -> [Action] {
        var handshake = handshake
        do {
            guard try handshake.readMessage(message1).isEmpty else { return fail(.malformedFrame) }
            let ratchetKey = ECKeyPair.generate(using: &generator)
            let message2 = try handshake.writeMessage(ratchetKey.publicKey.serialized)
            phase = .joinerAwaitingMessage3(handshake, ratchetKey: ratchetKey)
            return [.send(V2FrameType.handshake.frame(message2))]
        } catch {
            return fail(V2Error(noise: error))
        }
    }

    /// Joiner: reads msg3 (the first message that depends on the psk, so a wrong secret
    /// fails here), seeds the session as Signal's Bob and sends the confirmation.
    private mutating func joinerRead(
        message3: [UInt8], _ handshake: HandshakeState, ratchetKey: ECKeyPair
    ) -> [Action] {
        var handshake = handshake
        do {
            guard try handshake.readMessage(message3).isEmpty else { return fail(.malformedFrame) }
        } catch {
            return fail(V2Error(noise: error))
        }
        let seeded: SessionInitialization.SeededParameters
        do {
            seeded = try seed(handshake)
        } catch {
            return fail(error)
        }
        var session = V2Session(
            role: role, state: SessionInitialization.initializeBob(seeded: seeded, ourRatchetKey: ratchetKey))
        let confirmation = session.seal(kind: .confirmation, [])
        phase = .established
        return [.send(confirmation), .established(session)]
    }

    /// The ratchet seed and identities of a completed handshake.
    private func seed(_ handshake: HandshakeState) throws(V2Error) -> SessionInitialization.SeededParameters {
        let transport: NoiseTransport
        do {
            transport = try handshake.transport()
        } catch {
            throw V2Error(noise: error)
        }
        guard let remote = handshake.remoteStaticPublicKey,
            let theirIdentity = try? ECPublicKey(rawRepresentation: remote),
            let ourIdentity = try? ECPublicKey(rawRepresentation: staticKey.publicKey),
            // Split() gives k1 (initiator → responder) and k2; the creator is the initiator.
            let k1 = (role == .creator ? transport.sender : transport.receiver)?.symmetricKey,
            let k2 = (role == .creator ? transport.receiver : transport.sender)?.symmetricKey
        else { throw .invalidPeerKey }
        let (rootKey, chainKey) = V2KeySchedule.ratchetSeed(
            initiatorToResponder: k1, responderToInitiator: k2, handshakeHash: handshake.handshakeHash)
        return .init(
            ourIdentity: IdentityKey(ourIdentity), theirIdentity: IdentityKey(theirIdentity), rootKey: rootKey,
            chainKey: chainKey)
    }

    /// Refuses (without failing the pairing) a handshake frame whose length is that of
    /// another handshake message; any other wrong length is left to the Noise read.
    private func checkLength(_ body: [UInt8], message index: Int) throws(V2Error) {
        let lengths = V2KeySchedule.handshakeMessageLengths
        guard body.count == lengths[index] || !lengths.contains(body.count) else {
            throw V2Error(.unexpectedFrame, "handshake message of another step")
        }
    }

    /// Fails the pairing; the abort frame goes first unless the peer aborted.
    private mutating func fail(_ error: V2Error, notifyPeer: Bool = true) -> [Action] {
        phase = .failed(error)
        return notifyPeer ? [.send(V2FrameType.abortFrame), .failed(error)] : [.failed(error)]
    }

    /// A Curve25519 key pair from 32 bytes of `generator`.
    private static func keyPair(using generator: inout some RandomNumberGenerator) -> NoiseKeyPair {
        let secret = SecretBytes(randomCount: 32, using: &generator)
        do {
            return try secret.withUnsafeBytes { raw throws(NoiseError) in try NoiseKeyPair(rawPrivateKey: raw) }
        } catch {
            preconditionFailure("32 bytes are always an X25519 private key")
        }
    }
}

extension V2Error {
    /// The v2 error for a Noise failure: coarse, as InvisoNoise's own errors.
    init(noise error: NoiseError) {
        switch error {
        case .lowOrderPublicKey, .invalidKey: self = .invalidPeerKey
        case .malformedMessage, .messageTooLarge: self = .malformedFrame
        default: self = .authenticationFailed
        }
    }
}

// MARK: - Redacted descriptions

extension V2Pairing: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The role and state; never a key or the invite's words.
    public var description: String { "V2Pairing(role: \(role), state: \(state))" }
    /// Same as ``description``.
    public var debugDescription: String { description }
    /// A mirror with no children, so `dump` and reflection show no secret.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
