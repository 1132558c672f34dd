import Crypto

extension CPace {
    /// One party's side of a CPace run: a value-type state machine with no I/O.
    ///
    /// Creating a party computes the generator from the shared inputs, samples the secret
    /// scalar y (32 random bytes) and the share Y = X25519(y, g). Send ``message``
    /// (or ``share`` and ``associatedData`` in a framing of your own) to the peer, then
    /// hand the peer's message to ``receive(_:)``, which returns the ISK.
    ///
    /// ```swift
    /// let prs = SecretBytes(Array("correct horse".utf8))
    /// var alice = try CPace.Party(role: .initiator, prs: prs, ci: ci, sid: sid, associatedData: adA)
    /// var bob = try CPace.Party(role: .responder, prs: prs, ci: ci, sid: sid, associatedData: adB)
    /// let keyA = try alice.receive(bob.message).intermediateSessionKey
    /// let keyB = try bob.receive(alice.message).intermediateSessionKey   // equal to keyA
    /// ```
    ///
    /// A party derives at most one key: after a successful ``receive(_:)`` the scalar is
    /// dropped and further calls throw ``CPaceError/alreadyFinished``. A rejected peer
    /// message (malformed, or a low-order share) leaves the state exactly as it was.
    /// Neither `description` nor reflection shows the scalar or the password.
    public struct Party: Sendable {
        private enum State: Sendable {
            case awaitingPeer(scalar: Curve25519.KeyAgreement.PrivateKey)
            case finished
        }

        /// This party's role, which fixes the transcript (initiator-responder or symmetric).
        public let role: Role
        /// This party's share Y = X25519(y, g), 32 bytes; public.
        public let share: [UInt8]
        /// This party's associated data (ADa or ADb), sent in clear and authenticated by
        /// the key.
        public let associatedData: [UInt8]
        private let sid: [UInt8]
        private var state: State

        /// Starts a run with a scalar drawn from the system's secure random generator.
        ///
        /// - Parameters:
        ///   - role: initiator (A), responder (B), or symmetric.
        ///   - prs: the password-related string both parties share.
        ///   - ci: the channel identifier (may be empty); both parties must use the same.
        ///     Party identities that both know belong here, initiator first.
        ///   - sid: the session id (may be empty; a fresh unique value is recommended).
        ///   - associatedData: ADa or ADb, sent in clear alongside the share.
        /// - Throws: ``CPaceError/invalidGenerator`` if the generator has low order
        ///   (negligible probability).
        public init(
            role: Role, prs: SecretBytes, ci: [UInt8] = [], sid: [UInt8] = [], associatedData: [UInt8] = []
        ) throws(CPaceError) {
            var generator = SystemRandomNumberGenerator()
            try self.init(role: role, prs: prs, ci: ci, sid: sid, associatedData: associatedData, using: &generator)
        }

        /// Starts a run with a scalar of 32 bytes drawn from `generator`
        /// (G_X25519.sample_scalar = sample_random_bytes(32)).
        ///
        /// Pass a cryptographically secure generator; deterministic ones are for tests.
        /// Each `next()` supplies 8 scalar bytes, least significant byte first.
        ///
        /// - Parameters: as ``init(role:prs:ci:sid:associatedData:)``, plus the generator.
        /// - Throws: ``CPaceError/invalidGenerator`` if the generator has low order.
        public init(
            role: Role, prs: SecretBytes, ci: [UInt8] = [], sid: [UInt8] = [], associatedData: [UInt8] = [],
            using generator: inout some RandomNumberGenerator
        ) throws(CPaceError) {
            let g = CPace.calculateGenerator(prs: prs, ci: ci, sid: sid)
            let scalar = SecretBytes(randomCount: CPace.shareByteCount, using: &generator)
            let key: Curve25519.KeyAgreement.PrivateKey
            do {
                key = try scalar.withUnsafeBytes { try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: $0) }
            } catch {
                preconditionFailure("swift-crypto refused a 32-byte X25519 scalar")
            }
            guard let y = g.withUnsafeBytes({ CPace.scalarMultVerify(key, $0) }) else { throw .invalidGenerator }
            self.role = role
            self.share = y.withUnsafeBytes { Array($0) }
            self.associatedData = associatedData
            self.sid = sid
            self.state = .awaitingPeer(scalar: key)
        }

        /// The message to send: lv_cat(Y, AD) = prepend_len(Y) ‖ prepend_len(AD), which is
        /// also this party's half of the transcript.
        public var message: [UInt8] { CPace.lvCat(share, associatedData) }

        /// Whether the key has been derived (the scalar is gone).
        public var isFinished: Bool {
            if case .finished = state { return true }
            return false
        }

        /// Derives the key from the peer's message lv_cat(Y, AD).
        ///
        /// - Throws: ``CPaceError/malformedMessage`` if the message does not parse,
        ///   ``CPaceError/invalidPeerShare`` if the peer's share gives the neutral element,
        ///   ``CPaceError/alreadyFinished`` after a key was derived. A throw changes nothing.
        public mutating func receive(_ peerMessage: [UInt8]) throws(CPaceError) -> Output {
            guard let (peerShare, peerAssociatedData) = CPace.parseMessage(peerMessage) else {
                throw .malformedMessage
            }
            return try receive(share: peerShare, associatedData: peerAssociatedData)
        }

        /// Derives the key from the peer's share and associated data, for applications that
        /// frame the two fields themselves.
        ///
        /// - Throws: as ``receive(_:)``; ``CPaceError/malformedMessage`` when `share` is not
        ///   32 bytes. A throw changes nothing.
        public mutating func receive(
            share peerShare: [UInt8], associatedData peerAssociatedData: [UInt8]
        ) throws(CPaceError) -> Output {
            guard case .awaitingPeer(let scalar) = state else { throw .alreadyFinished }
            guard peerShare.count == CPace.shareByteCount else { throw .malformedMessage }
            guard let k = CPace.scalarMultVerify(scalar, peerShare) else { throw .invalidPeerShare }
            let transcript =
                switch role {
                case .initiator: CPace.transcriptIR(share, associatedData, peerShare, peerAssociatedData)
                case .responder: CPace.transcriptIR(peerShare, peerAssociatedData, share, associatedData)
                case .symmetric: CPace.transcriptOC(share, associatedData, peerShare, peerAssociatedData)
                }
            let output = Output(
                intermediateSessionKey: CPace.intermediateSessionKey(sid: sid, k: k, transcript: transcript),
                sessionIDOutput: CPace.sessionIDOutput(transcript: transcript),
                peerAssociatedData: peerAssociatedData)
            state = .finished
            return output
        }
    }

    /// What a finished CPace run yields.
    public struct Output: Sendable {
        /// ISK, 64 bytes. Both parties hold the same value exactly when they used the same
        /// PRS, CI and sid and saw the same two messages. Pass it through a KDF before use
        /// (draft §10.3); the raw shared point K is never exposed.
        public let intermediateSessionKey: SecretBytes
        /// sid_output = SHA-512(`"CPaceSidOutput"` ‖ transcript), 64 public bytes that
        /// identify the run (draft §10.6); useful when no sid was available up front.
        public let sessionIDOutput: [UInt8]
        /// The peer's associated data, which the key authenticates. Applications that put
        /// a party identity there must check it (draft §10.1.1).
        public let peerAssociatedData: [UInt8]
    }
}

// MARK: - Redacted descriptions

extension CPace.Party: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The role and whether the run finished; never the scalar or the password.
    public var description: String { "CPace.Party(role: \(role), finished: \(isFinished))" }
    /// Same as ``description``.
    public var debugDescription: String { description }
    /// A mirror with no children, so `dump` and reflection show nothing secret.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

extension CPace.Output: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Names the fields; the key is redacted.
    public var description: String {
        "CPace.Output(intermediateSessionKey: <redacted \(intermediateSessionKey.count) bytes>, "
            + "sessionIDOutput: \(sessionIDOutput.count) bytes, peerAssociatedData: \(peerAssociatedData.count) bytes)"
    }
    /// Same as ``description``.
    public var debugDescription: String { description }
    /// A mirror with no children, so `dump` and reflection show nothing secret.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
