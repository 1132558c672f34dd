import ArgumentParser
import Crypto
import Foundation
import InvisoCrypto
import InvisoNoise

/// `inviso bench noise`: Noise handshake and transport speed against swift-crypto baselines.
struct BenchNoise: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "noise",
        abstract: "Benchmark Noise XX handshakes and transport against swift-crypto primitives.",
        discussion: """
            For each protocol: full XX handshakes per second (both parties in one process, \
            static keys pre-made) beside the primitive ceiling (the same X25519, HMAC, hash \
            and AEAD calls made directly), and transport encrypt+decrypt throughput for 64 B \
            and 16 KiB messages beside raw ChaChaPoly seal+open. Baseline and implementation \
            are measured in alternating rounds; value and baseline are medians over the rounds, \
            ratio is the median of the per-round ratios. Use -c release. --filter matches the \
            figure names, e.g. "handshake", "BLAKE2s", "64B".
            """
    )

    static let protocolNames = ["Noise_XX_25519_ChaChaPoly_SHA256", "Noise_XX_25519_ChaChaPoly_BLAKE2s"]
    static let messageSizes = [64, 16 * 1024]

    @OptionGroup var options: BenchOptions

    func run() throws {
        #if DEBUG
        FileHandle.standardError.write(Data("warning: debug build; use `swift run -c release inviso bench noise`\n".utf8))
        #endif
        options.report.header()
        for name in Self.protocolNames {
            let noiseProtocol = try NoiseProtocol(name)
            if options.selected(Self.handshakeName(noiseProtocol)) {
                report(try handshakes(noiseProtocol))
            }
            for size in Self.messageSizes where options.selected(Self.transportName(noiseProtocol, messageSize: size)) {
                report(try transport(noiseProtocol, messageSize: size))
            }
        }
    }

    private static func handshakeName(_ noiseProtocol: NoiseProtocol) -> String {
        "\(noiseProtocol.name) handshake"
    }

    private static func transportName(_ noiseProtocol: NoiseProtocol, messageSize: Int) -> String {
        let label = messageSize >= 1024 ? "\(messageSize / 1024)KiB" : "\(messageSize)B"
        return "\(noiseProtocol.name) transport \(label)"
    }

    // MARK: Figures

    private func handshakes(_ noiseProtocol: NoiseProtocol) throws -> BenchResult {
        let initiatorStatic = NoiseKeyPair.generate()
        let responderStatic = NoiseKeyPair.generate()
        let ours = BenchOperation(workPerCall: 1) { count in
            for _ in 0..<count {
                consume(Self.handshake(noiseProtocol, initiatorStatic, responderStatic))
            }
        }
        let baseline: BenchOperation
        let name = Array(noiseProtocol.name.utf8)
        switch noiseProtocol.hash {
        case .sha256:
            let ceiling = XXPrimitiveCeiling<SHA256>(protocolName: name, initiatorStatic: initiatorStatic.privateKey,
                                                     responderStatic: responderStatic.privateKey)
            baseline = BenchOperation(workPerCall: 1) { count in
                for _ in 0..<count { consume(ceiling.run()) }
            }
        case .blake2s:
            let ceiling = XXPrimitiveCeiling<BLAKE2s>(protocolName: name, initiatorStatic: initiatorStatic.privateKey,
                                                      responderStatic: responderStatic.privateKey)
            baseline = BenchOperation(workPerCall: 1) { count in
                for _ in 0..<count { consume(ceiling.run()) }
            }
        default:
            throw CLIError("no ceiling for \(noiseProtocol.hash.rawValue)")
        }
        let rates = options.compare(ours: ours, baseline: baseline)
        return BenchResult(name: Self.handshakeName(noiseProtocol), value: rates.ours, unit: "handshakes/s",
                           baseline: rates.baseline, ratio: rates.ratio)
    }

    /// One complete XX handshake, both parties, empty payloads, through to the transports.
    private static func handshake(_ noiseProtocol: NoiseProtocol, _ initiatorStatic: NoiseKeyPair,
                                  _ responderStatic: NoiseKeyPair) -> UInt8 {
        do {
            var initiator = try HandshakeState(noiseProtocol, role: .initiator, localStatic: initiatorStatic)
            var responder = try HandshakeState(noiseProtocol, role: .responder, localStatic: responderStatic)
            _ = try responder.readMessage(try initiator.writeMessage())
            _ = try initiator.readMessage(try responder.writeMessage())
            _ = try responder.readMessage(try initiator.writeMessage())
            let initiatorTransport = try initiator.transport()
            let responderTransport = try responder.transport()
            return initiatorTransport.handshakeHash[0] ^ responderTransport.handshakeHash[1]
        } catch {
            fatalError("handshake failed in the benchmark: \(error)")
        }
    }

    private func transport(_ noiseProtocol: NoiseProtocol, messageSize: Int) throws -> BenchResult {
        var initiator = try HandshakeState(noiseProtocol, role: .initiator, localStatic: .generate())
        var responder = try HandshakeState(noiseProtocol, role: .responder, localStatic: .generate())
        _ = try responder.readMessage(try initiator.writeMessage())
        _ = try initiator.readMessage(try responder.writeMessage())
        _ = try responder.readMessage(try initiator.writeMessage())
        let pair = TransportPair(sender: try initiator.transport(), receiver: try responder.transport())
        let message = [UInt8](repeating: 0x5a, count: messageSize)

        let ours = BenchOperation(workPerCall: Double(messageSize)) { count in
            var sender = pair.sender
            var receiver = pair.receiver
            do {
                for _ in 0..<count {
                    let ciphertext = try sender.encrypt(message)
                    let plaintext = try receiver.decrypt(ciphertext)
                    consume(plaintext[plaintext.count - 1])
                }
            } catch {
                fatalError("transport failed in the benchmark: \(error)")
            }
            pair.sender = sender
            pair.receiver = receiver
        }

        let raw = RawChaChaState()
        let baseline = BenchOperation(workPerCall: Double(messageSize)) { count in
            let key = raw.key
            var counter = raw.counter
            var nonceBytes = [UInt8](repeating: 0, count: 12)
            do {
                for _ in 0..<count {
                    nonceBytes.withUnsafeMutableBytes { $0.storeBytes(of: counter.littleEndian, toByteOffset: 4, as: UInt64.self) }
                    counter += 1
                    let box = try ChaChaPoly.seal(message, using: key, nonce: ChaChaPoly.Nonce(data: nonceBytes))
                    let plaintext = try ChaChaPoly.open(box, using: key)
                    consume(plaintext[plaintext.endIndex - 1])
                }
            } catch {
                fatalError("ChaChaPoly failed in the benchmark: \(error)")
            }
            raw.counter = counter
        }
        let rates = options.compare(ours: ours, baseline: baseline)
        return BenchResult(name: Self.transportName(noiseProtocol, messageSize: messageSize), value: rates.ours / 1e6, unit: "MB/s",
                           baseline: rates.baseline / 1e6, ratio: rates.ratio)
    }

    // MARK: Output

    private func report(_ result: BenchResult) {
        options.report.emit(result)
    }
}

/// Transport state carried between measurement batches.
private final class TransportPair {
    var sender: NoiseTransport
    var receiver: NoiseTransport

    init(sender: NoiseTransport, receiver: NoiseTransport) {
        self.sender = sender
        self.receiver = receiver
    }
}

/// Raw ChaChaPoly key and counter carried between measurement batches.
private final class RawChaChaState {
    let key = SymmetricKey(size: .bits256)
    var counter: UInt64 = 0
}
