internal import InvisoNoise
internal import InvisoFuzzSupport

/// Scenario 2: `ExplicitNonceTransport.open` over a sequence of messages, checked against
/// a simple model of the replay window.
///
/// Input: transcript selector, direction bit, window-size selector (64, 128 or 1,024),
/// then operations (at most 64). Genuine messages are built for any nonce the input asks
/// for (absolute, or relative to the newest accepted nonce or the window's trailing edge),
/// so the fuzzer reaches the window's boundaries with authentic messages.
enum ExplicitNonceScenario {
    static let maximumOperations = 64
    static let windowSizes = [64, 128, 1024]

    static func run(_ input: inout FuzzInput, fixtures: Fixtures) {
        let transcript = fixtures.transcripts[Int(input.byte()) % fixtures.transcripts.count]
        let reverse = input.byte() & 1 == 1
        let windowSize = windowSizes[Int(input.byte()) % windowSizes.count]
        let sending = reverse ? transcript.responderTransport : transcript.initiatorTransport
        let receiving = reverse ? transcript.initiatorTransport : transcript.responderTransport
        var session = Session(
            name: transcript.noiseProtocol.name,
            senderCipher: sending.sender,
            sealer: ExplicitNonceTransport(sending, windowSize: windowSize),
            receiver: ExplicitNonceTransport(receiving, windowSize: windowSize),
            canReceive: receiving.receiver != nil,
            model: WindowModel(size: UInt64(windowSize)))
        var operations = 0
        while !input.isEmpty && operations < maximumOperations {
            operations += 1
            session.step(&input)
        }
    }

    /// The specification of the window: a nonce is fresh when it is above the newest
    /// accepted one, or less than `size` below it and not yet accepted.
    struct WindowModel {
        let size: UInt64
        var highest: UInt64?
        var accepted: Set<UInt64> = []

        func isFresh(_ nonce: UInt64) -> Bool {
            guard let highest else { return true }
            if nonce > highest { return true }
            return highest - nonce < size && !accepted.contains(nonce)
        }

        mutating func accept(_ nonce: UInt64) {
            accepted.insert(nonce)
            highest = max(highest ?? 0, nonce)
        }

        /// Some nonce that must be accepted now, if any is left.
        var freshNonce: UInt64? {
            guard let highest else { return 0 }
            if highest < ExplicitNonceTransport.maximumNonce { return highest + 1 }
            let floor = highest - min(highest, size - 1)
            return (floor...highest).reversed().first { !accepted.contains($0) }
        }
    }

    struct Session {
        let name: String
        let senderCipher: CipherState?
        var sealer: ExplicitNonceTransport
        var receiver: ExplicitNonceTransport
        let canReceive: Bool
        var model: WindowModel

        mutating func step(_ input: inout FuzzInput) {
            switch input.byte() % 8 {
            case 0:
                let nonce = UInt64(input.uint32())
                deliverGenuine(nonce: nonce, payload: Self.payload(input.byte()))
            case 1:
                deliverGenuine(nonce: relativeToNewest(input.byte()), payload: Self.payload(input.byte()))
            case 2:
                deliverGenuine(nonce: relativeToTrailingEdge(input.byte()), payload: Self.payload(input.byte()))
            case 3:
                _ = attempt(input.chunk())
            case 4:
                let genuine = message(nonce: relativeToNewest(input.byte()), payload: Self.payload(input.byte()))
                let offset = Int(input.byte()) % (genuine.count + 1)
                _ = attempt(MessageShape.xor(genuine, with: input.chunk(), at: offset))
            case 5:
                // A genuine body under a different nonce prefix must not authenticate.
                let genuine = message(nonce: relativeToNewest(input.byte()), payload: Self.payload(input.byte()))
                let prefix = Self.bigEndian(UInt32(truncatingIfNeeded: relativeToNewest(input.byte())))
                _ = attempt(prefix + genuine.dropFirst(ExplicitNonceTransport.noncePrefixLength))
            case 6:
                let genuine = message(nonce: model.freshNonce ?? 0, payload: [9])
                _ = attempt(genuine + [UInt8](repeating: 0, count: MessageShape.maximumMessageLength + 1 - genuine.count))
            default:
                sealAndOpen(payload: Self.payload(input.byte()))
            }
        }

        static func payload(_ length: UInt8) -> [UInt8] {
            (0..<Int(length % 40)).map { UInt8(truncatingIfNeeded: $0 &* 59 &+ 3) }
        }

        static func bigEndian(_ value: UInt32) -> [UInt8] {
            [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8),
             UInt8(truncatingIfNeeded: value)]
        }

        /// A nonce within ±128 of the newest accepted one, clamped to the 32-bit range.
        func relativeToNewest(_ byte: UInt8) -> UInt64 {
            clamp(Int64(model.highest ?? 0) + Int64(Int8(bitPattern: byte)))
        }

        /// A nonce around the window's trailing edge (newest − size).
        func relativeToTrailingEdge(_ byte: UInt8) -> UInt64 {
            clamp(Int64(model.highest ?? 0) - Int64(model.size) + Int64(Int8(bitPattern: byte)))
        }

        func clamp(_ value: Int64) -> UInt64 {
            UInt64(min(max(value, 0), Int64(ExplicitNonceTransport.maximumNonce)))
        }

        /// The wire message the peer's `seal` would produce with this nonce: the nonce
        /// (4 bytes, big-endian), then the AEAD output under the standard Noise nonce.
        func message(nonce: UInt64, payload: [UInt8]) -> [UInt8] {
            let prefix = Self.bigEndian(UInt32(truncatingIfNeeded: nonce))
            guard var cipher = senderCipher else {
                return prefix + payload + [UInt8](repeating: 0, count: NoiseCipher.tagLength)
            }
            cipher.setNonce(nonce)
            return prefix + mustSucceed("\(name): sealing a genuine explicit-nonce message") { () throws(NoiseError) in
                try cipher.encrypt(payload)
            }
        }

        mutating func deliverGenuine(nonce: UInt64, payload: [UInt8]) {
            let fresh = model.isFresh(nonce)
            let opened = attempt(message(nonce: nonce, payload: payload))
            invariant(opened == (canReceive && fresh), "\(name): genuine message with nonce \(nonce) (fresh: \(fresh)) opened: \(opened)")
        }

        mutating func sealAndOpen(payload: [UInt8]) {
            var next = sealer
            do throws(NoiseError) {
                let sealed = try next.seal(payload)
                sealer = next
                let nonce = UInt64(sealed.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
                invariant(sealed == message(nonce: nonce, payload: payload), "\(name): seal differs from the Noise nonce layout")
                _ = attempt(sealed)
            } catch {
                invariant(senderCipher == nil && error == .sendNotAllowed, "\(name): seal failed with \(error)")
            }
        }

        /// Opens `bytes` and checks the outcome, and the error kind, against the model.
        mutating func attempt(_ bytes: [UInt8]) -> Bool {
            let nonce = UInt64(bytes.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            let expectedError: NoiseError? =
                if !canReceive { .receiveNotAllowed }
                else if bytes.count > MessageShape.maximumMessageLength { .messageTooLarge }
                else if bytes.count < ExplicitNonceTransport.noncePrefixLength + NoiseCipher.tagLength { .malformedMessage }
                else if !model.isFresh(nonce) { .replayedMessage }
                else { nil }  // opens if authentic, else authenticationFailed
            do throws(NoiseError) {
                let plaintext = try receiver.open(bytes)
                invariant(expectedError == nil, "\(name): opened a message expected to fail with \(expectedError!)")
                invariant(message(nonce: nonce, payload: plaintext) == bytes, "\(name): opened bytes the sender did not produce")
                model.accept(nonce)
                return true
            } catch {
                invariant(error == (expectedError ?? .authenticationFailed),
                          "\(name): open failed with \(error), expected \(expectedError ?? .authenticationFailed)")
                genuineStillOpens()
                return false
            }
        }

        /// After a failure, a genuine message with a fresh nonce opens (checked on a copy),
        /// and the model, which did not change, keeps predicting every later outcome.
        func genuineStillOpens() {
            guard canReceive, senderCipher != nil, let nonce = model.freshNonce else { return }
            var probe = receiver
            let plaintext = mustSucceed("\(name): a fresh genuine message after a rejected one") { () throws(NoiseError) in
                try probe.open(message(nonce: nonce, payload: [4, 2]))
            }
            invariant(plaintext == [4, 2], "\(name): plaintext differs after a rejected message")
        }
    }
}
