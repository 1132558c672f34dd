/// Constants of the direct TCP protocol (docs/direct.md, "Wire format").
package enum DirectWire {
    /// Bytes of the big-endian length prefix in front of every frame body.
    package static let lengthPrefixBytes = 4
    /// The largest body accepted before authentication completes (handshake messages are
    /// 36, 64 and 32 bytes).
    package static let maxHandshakeBody = 64
    /// The first four bytes of the dialer's first message: protocol and version.
    static let magic: [UInt8] = Array("IVD1".utf8)
    /// Bytes of each side's nonce.
    static let nonceBytes = 32
    /// Bytes of a handshake MAC (full HMAC-SHA256).
    static let macBytes = 32
    /// Bytes of the per-frame tag (HMAC-SHA256 truncated to 128 bits).
    static let tagBytes = 16
    /// Bytes of the frame-kind prefix inside an authenticated frame body.
    static let kindBytes = 1
    /// Domain separation for every MAC and key derived from the path key.
    static let label: [UInt8] = Array("inviso-direct-v1".utf8)

    /// Body sizes of the three handshake messages.
    static let dialBytes = magic.count + nonceBytes  // 36
    static let acceptBytes = nonceBytes + macBytes  // 64
    static let confirmBytes = macBytes  // 32

    /// Step bytes that separate the MACs and keys computed under the path key.
    enum Step: UInt8 {
        /// The acceptor's MAC (message 2).
        case accept = 0x02
        /// The dialer's MAC (message 3).
        case confirm = 0x03
        /// The frame key of frames the creator sends.
        case creatorFrames = 0x10
        /// The frame key of frames the joiner sends.
        case joinerFrames = 0x11
    }

    /// Authenticated frame overhead: kind byte plus tag.
    static let frameOverhead = kindBytes + tagBytes
}

/// The kinds of authenticated frame (the first body byte after the handshake).
enum DirectFrameKind: UInt8, Sendable {
    /// An opaque frame of the secure channel, handed to ``DirectConnection/incoming``.
    case data = 0x00
    /// Control: the creator chose this connection (empty payload). Never delivered.
    case selected = 0x01
    /// An opaque frame already authenticated end to end — a file chunk frame (`0x04`),
    /// sealed with AES-256-GCM under its file's key with its transfer and index bound —
    /// carried without a frame tag and outside the frame sequence (docs/direct.md,
    /// "Frames"): a second MAC over every chunk cost a whole SHA-256 pass on each side.
    /// Delivered like ``data``.
    case sealedChunk = 0x02

    /// The kind a frame of the secure channel travels as.
    static func carrying(_ frame: [UInt8]) -> DirectFrameKind {
        frame.first == V2FrameType.fileChunk.rawValue ? .sealedChunk : .data
    }
}

extension V2Pairing.Role {
    /// The byte that names the role inside the handshake MACs.
    var directByte: UInt8 {
        switch self {
        case .creator: 0x01
        case .joiner: 0x02
        }
    }

    /// The other side's role.
    var peer: V2Pairing.Role {
        switch self {
        case .creator: .joiner
        case .joiner: .creator
        }
    }
}
