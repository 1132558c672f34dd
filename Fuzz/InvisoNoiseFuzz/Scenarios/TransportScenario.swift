internal import InvisoNoise
internal import InvisoFuzzSupport

/// Scenario 1: a completed session's `NoiseTransport.decrypt` fed a sequence of genuine,
/// forged, mutated, replayed and oversized messages, with rekeys and nonce jumps to the
/// end of the nonce space in between.
///
/// Input: transcript selector, direction bit, then operations (at most 64) until the input
/// ends. The harness keeps the peer's sending transport in step, so "genuine" always means
/// exactly what the peer would send next.
enum TransportScenario {
    static let maximumOperations = 64

    static func run(_ input: inout FuzzInput, fixtures: Fixtures) {
        let transcript = fixtures.transcripts[Int(input.byte()) % fixtures.transcripts.count]
        let reverse = input.byte() & 1 == 1
        var session = Session(
            name: transcript.noiseProtocol.name,
            sender: reverse ? transcript.responderTransport : transcript.initiatorTransport,
            receiver: reverse ? transcript.initiatorTransport : transcript.responderTransport)
        var operations = 0
        while !input.isEmpty && operations < maximumOperations {
            operations += 1
            session.step(&input)
        }
    }

    struct Session {
        let name: String
        var sender: NoiseTransport
        var receiver: NoiseTransport
        var lastDelivered: [UInt8] = []

        mutating func step(_ input: inout FuzzInput) {
            switch input.byte() % 8 {
            case 0:
                let payload = Self.payload(length: input.byte())
                if let genuine = peekGenuine(payload) {
                    let accepted = attempt(genuine)
                    invariant(accepted || receiver.receiver == nil, "\(name): genuine transport message rejected")
                }
            case 1:
                _ = attempt(input.chunk())
            case 2:
                let genuine = peekGenuine(Self.payload(length: input.byte())) ?? []
                let offset = Int(input.byte()) % (genuine.count + 1)
                _ = attempt(MessageShape.xor(genuine, with: input.chunk(), at: offset))
            case 3:
                let genuine = peekGenuine(Self.payload(length: input.byte())) ?? []
                let keep = Int(input.byte()) % (genuine.count + 1)
                _ = attempt(Array(genuine.prefix(keep)) + input.chunk())
            case 4:
                sender.rekeySender()
                receiver.rekeyReceiver()
            case 5:
                jump(to: UInt64.max - UInt64(input.byte() % 4))
            case 6:
                let genuine = peekGenuine([7]) ?? []
                _ = attempt(genuine + [UInt8](repeating: 0, count: MessageShape.maximumMessageLength + 1 - genuine.count))
            default:
                _ = attempt(lastDelivered)
            }
            if let sending = sender.sender, let receiving = receiver.receiver {
                invariant(sending.nonce == receiving.nonce, "\(name): sender and receiver nonces drifted apart")
            }
        }

        static func payload(length: UInt8) -> [UInt8] {
            (0..<Int(length % 48)).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        }

        /// What the peer would send next for `payload`, without sending it; `nil` when it
        /// cannot send (one-way pattern, or nonce space used up), which is also checked.
        func peekGenuine(_ payload: [UInt8]) -> [UInt8]? {
            var peer = sender
            do throws(NoiseError) {
                return try peer.encrypt(payload)
            } catch {
                if let sending = sender.sender {
                    invariant(error == .nonceExhausted && sending.nonce == .max, "\(name): encrypt failed with \(error)")
                    invariant(peer.sender?.nonce == .max, "\(name): failed encrypt moved the nonce")
                } else {
                    invariant(error == .sendNotAllowed, "\(name): one-way encrypt failed with \(error)")
                }
                return nil
            }
        }

        /// Decrypts `message`; checks the outcome against what the sender produced and that
        /// a failure leaves the receiving nonce, and so the session, unchanged.
        mutating func attempt(_ message: [UInt8]) -> Bool {
            let nonceBefore = receiver.receiver?.nonce
            do throws(NoiseError) {
                let plaintext = try receiver.decrypt(message)
                // Success means the peer would have sent exactly these bytes for this plaintext.
                var peer = sender
                let resealed = mustSucceed("\(name): re-encrypting an accepted plaintext") { () throws(NoiseError) in
                    try peer.encrypt(plaintext)
                }
                invariant(resealed == message, "\(name): decrypt accepted bytes the sender did not produce")
                invariant(receiver.receiver?.nonce == nonceBefore.map { $0 + 1 }, "\(name): decrypt did not advance the nonce")
                sender = peer
                lastDelivered = message
                return true
            } catch {
                let expected: NoiseError =
                    if nonceBefore == nil { .receiveNotAllowed }
                    else if message.count > MessageShape.maximumMessageLength { .messageTooLarge }
                    else if nonceBefore == .max { .nonceExhausted }
                    else { .authenticationFailed }
                invariant(error == expected, "\(name): decrypt failed with \(error), expected \(expected)")
                invariant(receiver.receiver?.nonce == nonceBefore, "\(name): failed decrypt moved the nonce")
                genuineStillDecrypts()
                return false
            }
        }

        /// After a failure, the next genuine message decrypts (checked on copies).
        func genuineStillDecrypts() {
            guard receiver.receiver != nil, let genuine = peekGenuine([1, 2, 3]) else { return }
            var probe = receiver
            let plaintext = mustSucceed("\(name): genuine message after a rejected one") { () throws(NoiseError) in
                try probe.decrypt(genuine)
            }
            invariant(plaintext == [1, 2, 3], "\(name): genuine plaintext differs after a rejected message")
        }

        /// Moves both directions' counters to `nonce` (near 2^64−1, to reach exhaustion).
        mutating func jump(to nonce: UInt64) {
            var sending = sender.sender
            sending?.setNonce(nonce)
            var receiving = receiver.receiver
            receiving?.setNonce(nonce)
            sender = NoiseTransport(sender: sending, receiver: sender.receiver, handshakeHash: sender.handshakeHash,
                                    remoteStaticPublicKey: sender.remoteStaticPublicKey)
            receiver = NoiseTransport(sender: receiver.sender, receiver: receiving, handshakeHash: receiver.handshakeHash,
                                      remoteStaticPublicKey: receiver.remoteStaticPublicKey)
        }
    }
}
