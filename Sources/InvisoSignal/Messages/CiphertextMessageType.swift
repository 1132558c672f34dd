/// The kind of a ciphertext message, as libsignal numbers them (`CiphertextMessageType`).
///
/// The value travels next to the message bytes (for example in a server envelope), not
/// inside them.
public enum CiphertextMessageType: UInt8, Sendable {
    /// A ``SignalMessage``: a Double Ratchet message in an established session.
    case whisper = 2
    /// A ``PreKeySignalMessage``: the first messages of a session, carrying the PQXDH/X3DH
    /// parameters.
    case preKey = 3
    /// A ``SenderKeyMessage``: a group message encrypted with a sender key.
    case senderKey = 7
    /// A plaintext content message (decryption-error reports); not produced by this library.
    case plaintext = 8
}
