/// The first byte of every Inviso v2 frame (binary relay frames; `docs/protocol.md`, "v2").
///
/// | byte | frame | body |
/// |---|---|---|
/// | `0x01` | CPace message | `lv_cat(Y, AD)` with AD empty: `0x20 ‖ Y (32) ‖ 0x00` |
/// | `0x02` | Noise handshake message | the `XXpsk3` message (48, 129 or 64 bytes) |
/// | `0x03` | ratchet message | a libsignal `SignalMessage` (version 3) |
/// | `0x04` | file chunk | ``FileChunkFrame``: transfer id ‖ index ‖ chunk sealed under the offer's key |
/// | `0x7F` | abort | one reason byte: `0x01` = pairing failed |
///
/// Drivers use it to route: handshake frames to ``V2Pairing``, ratchet frames to the
/// ``V2Session`` once there is one.
public enum V2FrameType: UInt8, Sendable, Hashable {
    /// A CPace message.
    case cpace = 0x01
    /// A Noise handshake message.
    case handshake = 0x02
    /// A Double Ratchet message.
    case ratchet = 0x03
    /// A chunk of a file transfer (``FileChunkFrame``), handled beside the session machine.
    case fileChunk = 0x04
    /// The peer gave up the pairing.
    case abort = 0x7F

    /// The type of `frame`; `nil` when it is empty or its first byte is no v2 type.
    public init?(frame: some Collection<UInt8>) {
        guard let first = frame.first else { return nil }
        self.init(rawValue: first)
    }

    /// `type ‖ body`.
    func frame(_ body: some Collection<UInt8>) -> [UInt8] {
        var frame = [rawValue]
        frame.reserveCapacity(1 + body.count)
        frame.append(contentsOf: body)
        return frame
    }
}

extension V2FrameType {
    /// The abort frame's reason byte for "pairing failed", the only reason defined.
    static let pairingFailedReason: UInt8 = 0x01
    /// The abort frame we send: `0x7F 0x01`.
    static let abortFrame: [UInt8] = [abort.rawValue, pairingFailedReason]
}
