/// Why a file transfer step was refused.
///
/// Never carries file contents or keys; the context is a fixed description of the step.
public struct FileTransferError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: Sendable, Hashable { case malformed, authenticationFailed, outOfOrder, hashMismatch, io, tooLarge }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// An offer or chunk that does not parse, or fields out of range.
        public static let malformed = Code(.malformed)
        /// A chunk that does not open under the file key at its index.
        public static let authenticationFailed = Code(.authenticationFailed)
        /// A chunk other than the next one the receiver holds.
        public static let outOfOrder = Code(.outOfOrder)
        /// The complete file's SHA-256 is not the one the sender sent.
        public static let hashMismatch = Code(.hashMismatch)
        /// Reading or writing a file failed.
        public static let io = Code(.io)
        /// More bytes than the offer announced.
        public static let tooLarge = Code(.tooLarge)

        public var description: String {
            switch base {
            case .malformed: "malformed"
            case .authenticationFailed: "authenticationFailed"
            case .outOfOrder: "outOfOrder"
            case .hashMismatch: "hashMismatch"
            case .io: "io"
            case .tooLarge: "tooLarge"
            }
        }
    }

    /// What went wrong.
    public let code: Code
    /// The step (fixed text).
    public let context: String

    init(_ code: Code, _ context: String) {
        self.code = code
        self.context = context
    }

    public var description: String { "\(code): \(context)" }
}
