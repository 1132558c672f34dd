/// An invalid ``TURNConfiguration``.
public struct TURNConfigurationError: Error, Sendable, Equatable {
    /// What is wrong.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: Sendable, Hashable {
            case emptySecret, noURLs, invalidURL, invalidTTL
        }
        private let base: Base

        /// The shared secret has no bytes.
        public static let emptySecret = Code(base: .emptySecret)
        /// The list of server URLs is empty.
        public static let noURLs = Code(base: .noURLs)
        /// A URL does not start with `turn:`, `turns:` or `stun:`, names no host, or holds
        /// whitespace or control characters.
        public static let invalidURL = Code(base: .invalidURL)
        /// The lifetime is shorter than one second or longer than
        /// ``TURNConfiguration/maximumTTL``.
        public static let invalidTTL = Code(base: .invalidTTL)

        /// The code's name.
        public var description: String {
            switch base {
            case .emptySecret: "emptySecret"
            case .noURLs: "noURLs"
            case .invalidURL: "invalidURL"
            case .invalidTTL: "invalidTTL"
            }
        }
    }

    /// What is wrong.
    public let code: Code
    /// Detail for humans (never the secret).
    public let detail: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: What is wrong.
    ///   - detail: Detail for humans; never put the secret in it.
    public init(_ code: Code, _ detail: String = "") {
        self.code = code
        self.detail = detail
    }

    /// Equality by code (the detail is for humans).
    public static func == (lhs: TURNConfigurationError, rhs: TURNConfigurationError) -> Bool {
        lhs.code == rhs.code
    }
}

// MARK: - CustomStringConvertible

extension TURNConfigurationError: CustomStringConvertible {
    /// `TURNConfigurationError(code: detail)`.
    public var description: String {
        detail.isEmpty ? "TURNConfigurationError(\(code))" : "TURNConfigurationError(\(code): \(detail))"
    }
}
