public import InvisoCrypto
import InvisoSignal

// Storage format: format (0x01) ‖ role (0x01 creator, 0x02 joiner) ‖ the bytes of an
// InvisoSignal SessionRecord holding the session as its current state and nothing
// archived (layout in SessionRecord+Serialization.swift).

extension V2Session {
    private static let formatVersion: UInt8 = 0x01

    /// The session's bytes for storage. They contain the ratchet's private keys and chain
    /// keys: keep them encrypted at rest, and replace them after every ``seal(_:)`` and
    /// ``open(_:using:)`` (an old copy would reuse message keys or accept a replay).
    public func serialized() -> SecretBytes {
        let record = SessionRecord(current: state, previous: []).serialize()
        return SecretBytes(count: 2 + record.count) { output in
            output[0] = Self.formatVersion
            output[1] = role == .creator ? 0x01 : 0x02
            record.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: output[2...]).copyMemory(from: $0) }
        }
    }

    /// Restores a session from ``serialized()``.
    ///
    /// - Throws: ``V2Error/invalidSession`` for anything that is not a stored v2 session.
    public init(serialized: SecretBytes) throws(V2Error) {
        let parsed: (V2Pairing.Role, SessionRecord)? = serialized.withUnsafeBytes { raw in
            guard raw.count > 2, raw[0] == Self.formatVersion, raw[1] == 0x01 || raw[1] == 0x02,
                let record = try? SessionRecord(serialized: UnsafeRawBufferPointer(rebasing: raw[2...]))
            else { return nil }
            return (raw[1] == 0x01 ? .creator : .joiner, record)
        }
        guard let (role, record) = parsed, let state = record.current, record.previous.isEmpty,
            state.sessionVersion == SessionInitialization.seededSessionVersion, state.pendingPreKey == nil
        else { throw .invalidSession }
        self.init(role: role, state: state)
    }
}
