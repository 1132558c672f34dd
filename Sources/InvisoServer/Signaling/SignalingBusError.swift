/// An error from a ``SignalingBus``.
public struct SignalingBusError: Error, Sendable, Equatable {
    /// What went wrong.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: Sendable, Hashable {
            case notRunning, alreadyStarted, payloadTooLarge, invalidConfiguration, unavailable
        }
        private let base: Base

        /// The bus is not running: its `run()` has not started yet, or has ended.
        public static let notRunning = Code(base: .notRunning)
        /// `run()` was called a second time; a bus runs once.
        public static let alreadyStarted = Code(base: .alreadyStarted)
        /// The message is larger than the bus carries.
        public static let payloadTooLarge = Code(base: .payloadTooLarge)
        /// The bus was created with a channel name or instance ID it cannot use.
        public static let invalidConfiguration = Code(base: .invalidConfiguration)
        /// The database cannot be reached or refused the message.
        public static let unavailable = Code(base: .unavailable)

        /// The code's name.
        public var description: String {
            switch base {
            case .notRunning: "notRunning"
            case .alreadyStarted: "alreadyStarted"
            case .payloadTooLarge: "payloadTooLarge"
            case .invalidConfiguration: "invalidConfiguration"
            case .unavailable: "unavailable"
            }
        }
    }

    /// What went wrong.
    public let code: Code
    /// Detail for logs (never message contents).
    public let detail: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: What went wrong.
    ///   - detail: Detail for logs.
    public init(_ code: Code, _ detail: String = "") {
        self.code = code
        self.detail = detail
    }

    /// Equality by code (the detail is for humans).
    public static func == (lhs: SignalingBusError, rhs: SignalingBusError) -> Bool { lhs.code == rhs.code }
}

// MARK: - CustomStringConvertible

extension SignalingBusError: CustomStringConvertible {
    /// `SignalingBusError(code: detail)`.
    public var description: String {
        detail.isEmpty ? "SignalingBusError(\(code))" : "SignalingBusError(\(code): \(detail))"
    }
}
