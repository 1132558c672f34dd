import InvisoMesh
internal import InvisoFuzzSupport

/// One payload decoder on arbitrary bytes, chosen by the next input byte. Whatever a decoder
/// accepts must re-encode without error to bytes that decode to the same value; for the
/// canonical formats (chat message, fragment, leave, capabilities in canonical form) the
/// re-encoding must equal the input.
enum PayloadScenario {
    static let decoders = 10

    static func run(_ input: inout FuzzInput) {
        let which = Int(input.byte()) % decoders
        let bytes = input.rest()
        switch which {
        case 0:
            guard let message = try? ChatMessage(decoding: bytes) else { return }
            let encoded = mustSucceed("chat message re-encoding") { try message.encoded() }
            invariant(encoded == bytes, "chat message is not canonical")
        case 1:
            check(bytes, PrivateMessagePacket.init(decoding:)) { try $0.encoded() }
        case 2:
            check(bytes, NoisePayload.init(decoding:)) { $0.encoded() }
        case 3:
            guard let fragment = try? FragmentPayload(decoding: bytes) else { return }
            invariant(fragment.encoded() == bytes, "fragment payload is not canonical")
        case 4:
            check(bytes, RequestSyncPacket.init(decoding:)) { try $0.encoded() }
        case 5:
            check(bytes, IdentityAnnouncement.init(decoding:)) { try $0.encoded() }
        case 6:
            check(bytes, AuthenticatedPeerState.init(decoding:)) { try $0.encoded() }
        case 7:
            check(bytes, { (bytes: [UInt8]) throws(MeshWireError) in try FileTransferPacket(decoding: bytes) }) {
                try $0.encoded()
            }
        case 8:
            guard let leave = try? LeavePayload(decoding: bytes) else { return }
            invariant(mustSucceed("leave re-encoding") { try leave.encoded() } == bytes, "leave is not canonical")
        default:
            let lenient = PeerCapabilities(decoding: bytes)
            invariant(PeerCapabilities(decoding: lenient.encoded()) == lenient, "capabilities do not round-trip")
            if let strict = try? PeerCapabilities(canonicalEncoding: bytes) {
                invariant(strict.encoded() == bytes && strict == lenient, "canonical capabilities differ")
            }
        }
    }

    /// Decode; if accepted, re-encoding must succeed and decode to the same value.
    static func check<Value: Equatable>(
        _ bytes: [UInt8], _ decode: ([UInt8]) throws(MeshWireError) -> Value, _ encode: (Value) throws -> [UInt8]
    ) {
        guard let value = try? decode(bytes) else { return }
        let encoded = mustSucceed("re-encoding \(Value.self)") { try encode(value) }
        invariant((try? decode(encoded)) == value, "\(Value.self) does not round-trip")
        invariant(encoded.count <= bytes.count + 8, "\(Value.self) re-encoding grew")
    }
}
