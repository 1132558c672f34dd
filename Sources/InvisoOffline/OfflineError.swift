/// Why an `InvisoOffline` operation failed.
///
/// A ``Code`` and a short fixed context for logs and messages. Never plaintext, key
/// material or the pasted text itself: a paste may be someone else's secret.
public struct OfflineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: Sendable, Hashable {
            case malformedEnvelope, tooLarge, notCompressed
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The text is not an envelope of either form: not JSON, a field of the wrong type,
        /// a required field missing, base64 that does not decode.
        public static let malformedEnvelope = Code(.malformedEnvelope)
        /// The input is larger than any envelope can be.
        public static let tooLarge = Code(.tooLarge)
        /// Data that should be a raw DEFLATE stream is not one.
        public static let notCompressed = Code(.notCompressed)

        /// The code's name.
        public var description: String {
            switch base {
            case .malformedEnvelope: "malformedEnvelope"
            case .tooLarge: "tooLarge"
            case .notCompressed: "notCompressed"
            }
        }
    }

    /// What went wrong.
    public let code: Code
    /// A fixed text naming where (a field name, a step); never input data.
    public let context: String

    /// An error with a code and a fixed context.
    public init(_ code: Code, _ context: String = "") {
        self.code = code
        self.context = context
    }

    /// `code` or `code: context`.
    public var description: String { context.isEmpty ? code.description : "\(code): \(context)" }

    /// Errors compare by code.
    public static func == (lhs: OfflineError, rhs: OfflineError) -> Bool { lhs.code == rhs.code }
    /// Hashes the code.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// ``Code/malformedEnvelope`` with a context.
    static func malformed(_ context: String) -> OfflineError { OfflineError(.malformedEnvelope, context) }
}
