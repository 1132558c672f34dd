/// One record of the v2 message layer: the plaintext inside a ratchet frame
/// (`docs/protocol.md`, "Ratchet plaintexts").
///
/// ```
/// 0x00                             the joiner's pairing confirmation (V2Pairing only)
/// 0x01 ‖ seq (u64 BE) ‖ payload    a message: seq ≥ 1, payload = ChatPayload plaintext
/// 0x02 ‖ ack (u64 BE)              cumulative ack: every seq ≤ ack was delivered
/// ```
public enum ReliableRecord: Sendable, Hashable {
    /// A message with its sequence number (its id) and the app payload bytes.
    case data(seq: UInt64, payload: [UInt8])
    /// A cumulative acknowledgement.
    case ack(UInt64)

    /// The kind byte of a data record.
    static let dataKind: UInt8 = 0x01
    /// The kind byte of an ack record.
    static let ackKind: UInt8 = 0x02

    /// The record's bytes, kind byte first.
    public var encoded: [UInt8] {
        switch self {
        case .data(let seq, let payload):
            var bytes = [Self.dataKind]
            bytes.reserveCapacity(9 + payload.count)
            Self.append(seq, to: &bytes)
            bytes.append(contentsOf: payload)
            return bytes
        case .ack(let ack):
            var bytes = [Self.ackKind]
            Self.append(ack, to: &bytes)
            return bytes
        }
    }

    /// Parses a record, checking every length.
    ///
    /// - Throws: ``ReliableError/malformedRecord`` for an empty record, an unknown kind, a
    ///   data record shorter than 9 bytes or with seq 0, an ack record that is not exactly
    ///   9 bytes.
    public init(decoding bytes: some Collection<UInt8>) throws(ReliableError) {
        let bytes = Array(bytes)
        guard let kind = bytes.first, bytes.count >= 9 else { throw .malformedRecord }
        let number = bytes[1..<9].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        switch kind {
        case Self.dataKind:
            guard number > 0 else { throw .malformedRecord }
            self = .data(seq: number, payload: Array(bytes[9...]))
        case Self.ackKind:
            guard bytes.count == 9 else { throw .malformedRecord }
            self = .ack(number)
        default:
            throw .malformedRecord
        }
    }

    private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}

// MARK: - Redacted description

extension ReliableRecord: CustomStringConvertible {
    /// The kind and number; never the payload.
    public var description: String {
        switch self {
        case .data(let seq, let payload): "data(seq: \(seq), \(payload.count) bytes)"
        case .ack(let ack): "ack(\(ack))"
        }
    }
}
