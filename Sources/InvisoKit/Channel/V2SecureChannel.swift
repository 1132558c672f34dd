public import InvisoCrypto
public import InvisoNoise
public import InvisoWire

/// The v2 ``SecureChannel``: ``V2Pairing`` frames (CPace, Noise XXpsk3) as binary frames,
/// then a ``V2Session`` whose ratchet plaintexts are ``ReliableRecord``s
/// (`docs/protocol.md`, "v2" and "Ratchet plaintexts").
///
/// Verified as soon as it is established: the pairing only succeeds when both sides used
/// the same secret words and nobody substituted a key. It ignores signaling messages (a
/// v2 side never falls back to v1 by itself; see ``ChatClient`` for the creator's
/// fallback when the peer has only the join code).
public struct V2SecureChannel: SecureChannel {
    private enum Phase: Sendable {
        case pairing(V2Pairing)
        case established(V2Session)
        case failed
    }

    private var phase: Phase
    private var random: AnyGenerator
    /// Whether the pairing received any frame from the peer (a v1 fallback is then too late).
    public private(set) var heardFromPeer = false

    /// A channel for one room.
    ///
    /// - Parameters:
    ///   - role: ``V2Pairing/Role/creator`` for the room's creator.
    ///   - invite: The invite (its words are the pairing's secret).
    ///   - roomID: The server's room id.
    ///   - staticKey: This session's fresh Noise static key pair (our identity).
    ///   - random: The generator for CPace, Noise and ratchet keys.
    /// - Throws: ``SecureChannelError/refused`` for an invalid room id.
    public init(
        role: V2Pairing.Role, invite: Invite, roomID: String, staticKey: NoiseKeyPair,
        random: some RandomNumberGenerator & Sendable
    ) throws(SecureChannelError) {
        var generator = AnyGenerator(generator: random)
        do {
            phase = .pairing(
                try V2Pairing(role: role, invite: invite, roomID: roomID, staticKey: staticKey, using: &generator.generator))
        } catch {
            throw SecureChannelError(refusing: error)
        }
        self.random = generator
    }

    /// Restores an established channel from its session (a resumed session,
    /// ``ChatSessionSnapshot``).
    public init(restoring session: V2Session, random: some RandomNumberGenerator & Sendable) {
        phase = .established(session)
        self.random = AnyGenerator(generator: random)
        heardFromPeer = true
    }

    /// ``ChatProtocolVersion/v2``.
    public var version: ChatProtocolVersion { .v2 }

    /// True once established, and for the creator from the end of the Noise handshake
    /// (messages sealed then are part of the session the confirmation establishes).
    public var canSeal: Bool {
        switch phase {
        case .established: true
        case .pairing(let pairing): pairing.state == .awaitingConfirmation
        case .failed: false
        }
    }

    /// Whether the pairing succeeded.
    public var isEstablished: Bool {
        if case .established = phase { true } else { false }
    }

    /// Same as ``isEstablished``: a v2 session is authenticated by the secret words.
    public var isVerified: Bool { isEstablished }

    /// Always true.
    public var carriesAcknowledgements: Bool { true }

    /// What ``safetyNumber`` is computed from (public keys and ids only), once established.
    public var safetyNumberInputs: SafetyNumberInputs? { session?.safetyNumberInputs }

    /// The peer's Noise static public key once established.
    public var peerIdentity: [UInt8]? { session?.peerIdentity }

    /// `HKDF-SHA256(k1 ‖ k2, salt = h, info = "inviso v2 direct", 32)` once established.
    public var directPathKey: SecretBytes? { session?.directPathKey }

    /// The session, once established.
    public var session: V2Session? {
        if case .established(let session) = phase { session } else { nil }
    }

    /// Sends our CPace message.
    public mutating func start() -> [SecureChannelAction] {
        guard case .pairing(var pairing) = phase else { return [] }
        let actions = pairing.start()
        phase = .pairing(pairing)
        return map(actions)
    }

    /// Pairing frames go to ``V2Pairing``, ratchet frames to the session.
    public mutating func receive(frame: [UInt8]) throws(SecureChannelError) -> [SecureChannelAction] {
        switch phase {
        case .failed:
            throw .pairingFailed
        case .pairing(var pairing):
            let actions: [V2Pairing.Action]
            do {
                actions = try pairing.receive(frame, using: &random.generator)
            } catch {
                throw SecureChannelError(refusing: error)
            }
            heardFromPeer = true
            phase = .pairing(pairing)
            return map(actions)
        case .established(var session):
            // A pairing frame after the pairing (a duplicate, or the peer's abort) is refused.
            let record: ReliableRecord
            do {
                record = try session.openRecord(frame, using: &random.generator)
            } catch {
                throw SecureChannelError(refusing: error)
            }
            phase = .established(session)
            return [.received(record)]
        }
    }

    /// v2 takes nothing over signaling: refused.
    public mutating func receive(signal: JSONObject) throws(SecureChannelError) -> [SecureChannelAction] {
        throw SecureChannelError(.refused, "signaling message in v2")
    }

    /// Seals a record with the ratchet.
    public mutating func seal(_ record: ReliableRecord) throws(SecureChannelError) -> [UInt8] {
        switch phase {
        case .established(var session):
            let frame = session.seal(record: record)
            phase = .established(session)
            return frame
        case .pairing(var pairing):
            // Only data can go before the confirmation (nothing to ack has arrived yet).
            guard case .data = record else { throw .notEstablished }
            do {
                let frame = try pairing.seal(Array(record.encoded.dropFirst()))
                phase = .pairing(pairing)
                return frame
            } catch {
                throw .notEstablished
            }
        case .failed:
            throw .notEstablished
        }
    }

    private mutating func map(_ actions: [V2Pairing.Action]) -> [SecureChannelAction] {
        var result: [SecureChannelAction] = []
        for action in actions {
            switch action {
            case .send(let frame):
                result.append(.sendFrame(frame))
            case .established(let session):
                phase = .established(session)
                result.append(.established)
            case .received(let body):
                // A message that overtook the confirmation: body = seq ‖ payload.
                if let record = try? ReliableRecord(decoding: [ReliableRecord.dataKind] + body) {
                    result.append(.received(record))
                }
            case .failed(let error):
                phase = .failed
                result.append(.failed(SecureChannelError(.pairingFailed, error.description)))
            }
        }
        return result
    }
}

// MARK: - Redacted description

extension V2SecureChannel: CustomStringConvertible, CustomReflectable {
    /// The protocol and whether it is established; never a key.
    public var description: String { "V2SecureChannel(established: \(isEstablished))" }
    /// No children, so reflection shows no key.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
