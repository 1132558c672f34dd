/// An error from a ``RoomStore``.
public struct RoomStoreError: Error, Sendable, Equatable {
    /// What went wrong.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: Sendable, Hashable {
            case codeTaken, unavailable, corrupt
        }
        private let base: Base

        /// The join code is in use.
        public static let codeTaken = Code(base: .codeTaken)
        /// The database cannot be reached or refused the operation.
        public static let unavailable = Code(base: .unavailable)
        /// A stored row could not be read back.
        public static let corrupt = Code(base: .corrupt)

        /// The code's name.
        public var description: String {
            switch base {
            case .codeTaken: "codeTaken"
            case .unavailable: "unavailable"
            case .corrupt: "corrupt"
            }
        }
    }

    /// What went wrong.
    public let code: Code
    /// Detail for logs (never device IDs or tokens).
    public let detail: String

    /// Creates an error.
    public init(_ code: Code, _ detail: String = "") {
        self.code = code
        self.detail = detail
    }

    /// The join code is in use.
    public static let codeTaken = RoomStoreError(.codeTaken)

    /// Equality by code (the detail is for humans).
    public static func == (lhs: RoomStoreError, rhs: RoomStoreError) -> Bool { lhs.code == rhs.code }
}

// MARK: - CustomStringConvertible

extension RoomStoreError: CustomStringConvertible {
    /// `RoomStoreError(code: detail)`.
    public var description: String { detail.isEmpty ? "RoomStoreError(\(code))" : "RoomStoreError(\(code): \(detail))" }
}
