/// An encrypted one-to-one message as it goes on the wire.
public enum CiphertextMessage: Sendable {
    /// A message in an established session (type 2).
    case whisper(SignalMessage)
    /// A message that also sets up the session at the receiver (type 3).
    case preKey(PreKeySignalMessage)

    /// The libsignal message type.
    public var type: CiphertextMessageType {
        switch self {
        case .whisper: .whisper
        case .preKey: .preKey
        }
    }

    /// The serialized bytes.
    public var serialized: [UInt8] {
        switch self {
        case .whisper(let message): message.serialized
        case .preKey(let message): message.serialized
        }
    }
}
