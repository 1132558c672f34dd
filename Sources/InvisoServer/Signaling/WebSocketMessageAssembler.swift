import InvisoWire
package import NIOCore
package import NIOWebSocket

/// Checks every frame a client sends against RFC 6455 §5 and joins fragments into
/// messages, with a bound on bytes, fragments and time — a value-type state machine with
/// no I/O: the socket's handler feeds it frames and the current instant and does what
/// the ``Output`` says.
///
/// ```
///              text/binary, fin=0                 continuation, fin=0
///   ┌──────┐ ──────────────────────► ┌───────────┐ ◄──────┐
///   │ idle │                         │ assembling │ ───────┘
///   └──────┘ ◄────────────────────── └───────────┘
///      ▲  │   continuation, fin=1 → .text/.binary     │ too big, too many, a new
///      │  │   (control frames may come between)       │ data frame, late → .fail
///      │  └── text/binary, fin=1 → .text/.binary       ▼
///      └───────────────────────────────────────────  failed (every later frame: .ignore)
/// ```
///
/// Why a machine of our own instead of `NIOWebSocketFrameAggregator`: the aggregator keeps
/// every fragment as its own buffer (a 64 KiB message in 1,024 one-byte fragments held
/// ~118 KB for as long as the client pinged), has no deadline, and leaves masking, RSV
/// bits, reserved opcodes and close payloads unchecked. Here fragments are copied into one
/// buffer, a message must be complete within ``Limits/assemblyTimeout`` of its first
/// fragment, and every violation fails the connection with the code RFC 6455 §7.4.1 gives.
package struct WebSocketMessageAssembler: Sendable {
    /// Bounds on one message.
    package struct Limits: Sendable, Equatable {
        /// The largest message in bytes (all fragments together); larger → 1009.
        package var maxMessageBytes: Int
        /// The most fragments one message may have; more → 1009.
        package var maxFragments = 256
        /// A fragmented message must be complete this long after its first fragment; later → 1008.
        package var assemblyTimeout: TimeAmount = .seconds(20)

        /// Creates limits.
        package init(maxMessageBytes: Int, maxFragments: Int = 256, assemblyTimeout: TimeAmount = .seconds(20)) {
            self.maxMessageBytes = maxMessageBytes
            self.maxFragments = maxFragments
            self.assemblyTimeout = assemblyTimeout
        }
    }

    /// What the handler does with a frame.
    package enum Output: Sendable, Equatable {
        /// Nothing (a fragment was kept, a pong arrived, or the connection already failed).
        case ignore
        /// A complete text message (not yet checked for UTF-8: the JSON parser does that).
        case text(ByteBuffer)
        /// A complete binary message.
        case binary(ByteBuffer)
        /// Answer with a pong carrying this payload.
        case ping(ByteBuffer)
        /// The client closes: echo this status code, then close.
        case close(code: UInt16)
        /// Fail the connection (RFC 6455 §7.1.7): send a close frame with this code, then close.
        case fail(code: UInt16, reason: String)

        /// The bytes of a text or binary message; 0 for anything else.
        package var messageBytes: Int {
            switch self {
            case .text(let message), .binary(let message): message.readableBytes
            default: 0
            }
        }
    }

    private enum State: Sendable {
        case idle
        case assembling(opcode: WebSocketOpcode, buffer: ByteBuffer, fragments: Int, deadline: NIODeadline)
        case failed
    }

    package let limits: Limits
    private var state: State = .idle

    package init(limits: Limits) {
        self.limits = limits
    }

    /// When the message being assembled must be complete, if one is.
    package var assemblyDeadline: NIODeadline? {
        guard case .assembling(_, _, _, let deadline) = state else { return nil }
        return deadline
    }

    /// Bytes held for an unfinished message.
    package var bufferedBytes: Int {
        guard case .assembling(_, let buffer, _, _) = state else { return 0 }
        return buffer.readableBytes
    }

    /// Takes one frame received at `now`.
    package mutating func receive(_ frame: WebSocketFrame, now: NIODeadline) -> Output {
        if case .failed = state { return .ignore }
        if let deadline = assemblyDeadline, now >= deadline { return fail(1008, "message not completed in time") }
        // §5.1: a server must fail a connection whose client frames are not masked.
        guard let mask = frame.maskKey else { return fail(1002, "frame not masked") }
        // §5.2: RSV bits only with a negotiated extension (we negotiate none).
        guard frame.reservedBits.isEmpty else { return fail(1002, "reserved bits set") }
        var data = frame.data
        data.withUnsafeMutableReadableBytes { WebSocketMasking.apply((mask[0], mask[1], mask[2], mask[3]), to: $0) }
        switch frame.opcode {
        case .text, .binary:
            guard case .idle = state else { return fail(1002, "new message before the last one ended") }
            guard data.readableBytes <= limits.maxMessageBytes else { return fail(1009, "message too large") }
            if frame.fin { return frame.opcode == .text ? .text(data) : .binary(data) }
            var buffer = ByteBuffer()
            buffer.reserveCapacity(data.readableBytes)
            buffer.writeImmutableBuffer(data)
            state = .assembling(opcode: frame.opcode, buffer: buffer, fragments: 1, deadline: now + limits.assemblyTimeout)
            return .ignore
        case .continuation:
            guard case .assembling(let opcode, var buffer, let fragments, let deadline) = state else {
                return fail(1002, "continuation without a message")
            }
            guard buffer.readableBytes + data.readableBytes <= limits.maxMessageBytes else { return fail(1009, "message too large") }
            guard fragments < limits.maxFragments else { return fail(1009, "too many fragments") }
            state = .idle  // drop the reference so the write below does not copy
            buffer.writeImmutableBuffer(data)
            if frame.fin { return opcode == .text ? .text(buffer) : .binary(buffer) }
            state = .assembling(opcode: opcode, buffer: buffer, fragments: fragments + 1, deadline: deadline)
            return .ignore
        case .ping:
            return .ping(data)
        case .pong:
            return .ignore
        case .connectionClose:
            return closeReceived(data)
        default:
            return fail(1002, "reserved opcode")
        }
    }

    /// Whether a message was left unfinished past its deadline at `now`.
    package mutating func checkDeadline(now: NIODeadline) -> Output {
        guard let deadline = assemblyDeadline, now >= deadline else { return .ignore }
        return fail(1008, "message not completed in time")
    }

    /// §5.5.1 and §7.4: an empty close body means 1005 (answer 1000); one byte is a
    /// protocol error; a code must be one an endpoint may send; the reason must be UTF-8.
    private mutating func closeReceived(_ body: ByteBuffer) -> Output {
        var body = body
        guard body.readableBytes > 0 else {
            state = .failed
            return .close(code: 1000)
        }
        guard let code = body.readInteger(as: UInt16.self) else { return fail(1002, "close payload of one byte") }
        guard Self.isValidCloseCode(code) else { return fail(1002, "invalid close code") }
        guard UTF8Validation.isValid(body.readableBytesView) else { return fail(1007, "close reason not UTF-8") }
        state = .failed
        return .close(code: code)
    }

    private mutating func fail(_ code: UInt16, _ reason: String) -> Output {
        state = .failed
        return .fail(code: code, reason: reason)
    }

    /// Codes a peer may put in a close frame (RFC 6455 §7.4.1 and the IANA registry):
    /// 1000–1003, 1007–1014, and 3000–4999. 1004 is reserved; 1005, 1006 and 1015 must
    /// never be sent.
    package static func isValidCloseCode(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }
}
