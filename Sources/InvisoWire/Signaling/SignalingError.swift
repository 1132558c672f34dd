/// Why a signaling message was refused; ``message`` is the text sent back in
/// `{"type":"error","error":…}`.
public struct SignalingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error text for the client (never echoes device IDs or message content).
    public let message: String

    /// Creates an error with the text sent to the client.
    public init(_ message: String) {
        self.message = message
    }

    /// The frame is not a JSON object.
    public static let invalidJSON = SignalingError("Invalid JSON format")
    /// The frame has no string `type`.
    public static let missingType = SignalingError("Missing message type")
    /// `join_room` without a usable `roomId`.
    public static let invalidRoomID = SignalingError("Invalid roomId")
    /// `join_room` without a usable `deviceId`.
    public static let invalidDeviceID = SignalingError("Invalid deviceId")

    /// A type the server does not know (the type is echoed only when short and printable).
    public static func unknownType(_ type: String) -> SignalingError {
        let printable = type.count <= 40 && type.unicodeScalars.allSatisfy { $0.isASCII && $0.value >= 0x20 }
        return SignalingError(printable ? "Unknown message type: \(type)" : "Unknown message type")
    }

    /// A required field is missing or has the wrong type.
    public static func missingField(_ name: String) -> SignalingError {
        SignalingError("Missing or invalid field: \(name)")
    }

    /// The text.
    public var description: String { message }
}
