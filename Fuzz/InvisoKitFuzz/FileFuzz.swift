internal import InvisoCrypto
internal import InvisoFuzzSupport
internal import InvisoKit
internal import InvisoTime

/// Files and contacts under arbitrary input: chunk frames, file and contact messages
/// (what parses serializes back to itself), and a `FileTransferMachine` fed arbitrary
/// control messages, chunk reports and timers: it never asks for a chunk outside the file,
/// and never for more than its window past what the receiver reported.
enum FileFuzz {
    static let offer: FileOffer = {
        do {
            return try FileOffer(
                id: FileTransferID(Array(repeating: 1, count: 16)), name: "f", size: 20 * 1_024, chunkSize: 1_024,
                key: SecretBytes(Array(repeating: 2, count: 32)))
        } catch {
            preconditionFailure("a valid offer")
        }
    }()

    static func run(_ input: inout FuzzInput) {
        let bytes = input.chunk()
        if let frame = try? FileChunkFrame(decoding: bytes) {
            invariant(frame.encoded() == bytes, "a chunk frame does not re-encode to its bytes")
        }
        let payload = ChatPayload(plaintext: bytes)
        switch payload {
        case .file, .contact:
            invariant(ChatPayload(plaintext: payload.plaintext) == payload, "a file or contact message does not round-trip")
        default:
            break
        }
        machine(&input)
    }

    static func machine(_ input: inout FuzzInput) {
        var machine = FileTransferMachine()
        let id = offer.id
        var now = ClockInstant.origin
        var acked: UInt64 = 0
        let sending = input.byte() & 1 == 0
        var actions = sending ? machine.handle(.offered(offer), at: now) : machine.handle(.control(.offer(offer)), at: now)
        if !sending { actions += machine.handle(.accepted(id, held: UInt64(input.byte() % 21)), at: now) }
        var generation = 0
        while !input.isEmpty {
            now = now.advanced(by: .milliseconds(Int(input.byte()) * 50))
            let value = UInt64(input.byte())
            let event: FileTransferMachine.Input
            switch input.byte() % 12 {
            case 0: event = .control(.request(id, from: value))
            case 1:
                event = .control(.progress(id, held: value))
                if value <= offer.chunkCount { acked = max(acked, value) }
            case 2: event = .control(.digest(id, sha256: Array(repeating: UInt8(truncatingIfNeeded: value), count: 32)))
            case 3: event = .control(.complete(id, verified: value & 1 == 0))
            case 4: event = .control(.cancel(id))
            case 5: event = .batchWritten(id, generation: generation)
            case 6: event = .batchFailed(id, generation: generation)
            case 7: event = .pathChanged(direct: value & 1 == 0)
            case 8: event = .timerFired
            case 9: event = .chunkStored(id, held: min(value, offer.chunkCount))
            case 10: event = .chunkGap(id)
            default: event = .resync
            }
            if case .control(.request(_, let from)) = event, from <= offer.chunkCount { acked = max(acked, from) }
            actions = machine.handle(event, at: now)
            for action in actions {
                guard case .sendChunks(let transfer, let range, let batch) = action else { continue }
                generation = batch
                invariant(transfer == id, "chunks of another transfer")
                invariant(range.upperBound <= offer.chunkCount && !range.isEmpty, "chunks outside the file")
                invariant(range.upperBound <= acked + 64, "chunks past the window")
            }
        }
    }
}
