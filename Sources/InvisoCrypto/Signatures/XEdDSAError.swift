/// Why an XEdDSA signing call was refused.
///
/// Verification never throws: it answers `false` for any invalid input.
public struct XEdDSAError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case invalidRandomByteCount
    }

    private let code: Code

    private init(_ code: Code) {
        self.code = code
    }

    /// The random input Z given to ``XEdDSA/sign(_:with:random:)`` is not 64 bytes.
    public static let invalidRandomByteCount = XEdDSAError(.invalidRandomByteCount)

    /// A short explanation, free of key material.
    public var description: String {
        switch code {
        case .invalidRandomByteCount: "XEdDSAError: the random input Z must be exactly 64 bytes"
        }
    }
}
