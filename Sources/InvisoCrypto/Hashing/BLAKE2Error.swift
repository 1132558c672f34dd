/// The error thrown when a ``BLAKE2s`` or ``BLAKE2b`` hasher is asked for parameters that
/// RFC 7693 does not allow.
///
/// The error says which parameter was wrong and the allowed range; it never carries key
/// bytes (nor the key's length), so it is safe to log.
public struct BLAKE2Error: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Reason: Hashable, Sendable {
        case invalidOutputByteCount
        case invalidKeyByteCount
    }

    private let reason: Reason

    private init(_ reason: Reason) {
        self.reason = reason
    }

    /// The requested digest length is outside 1...32 bytes (BLAKE2s) or 1...64 bytes (BLAKE2b).
    public static let invalidOutputByteCount = BLAKE2Error(.invalidOutputByteCount)

    /// The key is longer than 32 bytes (BLAKE2s) or 64 bytes (BLAKE2b).
    public static let invalidKeyByteCount = BLAKE2Error(.invalidKeyByteCount)

    /// A short explanation of the problem, without any key material.
    public var description: String {
        switch reason {
        case .invalidOutputByteCount:
            "BLAKE2Error: output length must be 1...32 bytes for BLAKE2s and 1...64 bytes for BLAKE2b"
        case .invalidKeyByteCount:
            "BLAKE2Error: key must be at most 32 bytes for BLAKE2s and at most 64 bytes for BLAKE2b"
        }
    }
}
