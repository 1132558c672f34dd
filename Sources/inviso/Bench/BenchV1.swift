import ArgumentParser
import Crypto
import Foundation
import InvisoCrypto
import InvisoKit

/// `inviso bench v1`: the iOS app's E2EE v1 messages against the primitive ceiling
/// measured in the same run.
struct BenchV1: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "v1",
        abstract: "Benchmark Inviso v1 (the iOS app's format) against the swift-crypto primitive ceiling.",
        discussion: """
            ours: V1Channel seal of a 100-byte message into the app's JSON frame, then parse and \
            open on the other side (replay window, reflection check, base64 and JSON included). \
            ceiling: the app's primitives called directly — two swift-crypto HKDF-SHA256 \
            message-key derivations (one per side), AES-256-GCM seal and open — with no framing. \
            Ours does HKDF's extract step once per session (it depends only on the session key), \
            so the ratio can exceed 1. The second line is the same measurement as µs per \
            message. Use -c release.
            """
    )

    @OptionGroup var options: BenchOptions

    func run() throws {
        #if DEBUG
        FileHandle.standardError.write(Data("warning: debug build; use `swift run -c release inviso bench v1`\n".utf8))
        #endif
        let report = options.report
        report.header()
        let name = "v1 message 100B (encrypt+decrypt)"
        guard options.selected(name) else { return }
        let key = SecretBytes((0..<32).map { UInt8($0) })
        let plaintext = [UInt8](repeating: 0x61, count: 100)
        nonisolated(unsafe) var alice = V1Channel(sessionKey: key, role: .initiator)
        nonisolated(unsafe) var bob = V1Channel(sessionKey: key, role: .responder)
        let ours = BenchOperation(workPerCall: 1) { count in
            do {
                for _ in 0..<count {
                    let frame = try alice.seal(plaintext)
                    consume(try bob.open(frame)[99])
                }
            } catch {
                fatalError("v1 message failed in the benchmark: \(error)")
            }
        }
        let sessionKey = SymmetricKey(data: key.withUnsafeBytes { Array($0) })
        var counter: UInt64 = 0
        let baseline = BenchOperation(workPerCall: 1) { count in
            for _ in 0..<count {
                var info = Array("inviso-msg-v1".utf8) + [0x01]
                withUnsafeBytes(of: counter.bigEndian) { info.append(contentsOf: $0) }
                counter &+= 1
                let sendKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: sessionKey, info: info, outputByteCount: 32)
                let receiveKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: sessionKey, info: info, outputByteCount: 32)
                do {
                    let box = try AES.GCM.seal(plaintext, using: sendKey)
                    consume(try AES.GCM.open(box, using: receiveKey)[99])
                } catch {
                    fatalError("AES-GCM failed in the benchmark: \(error)")
                }
            }
        }
        let rates = options.compare(ours: ours, baseline: baseline)
        report.emit(BenchResult(name: name, value: rates.ours, unit: "messages/s", baseline: rates.baseline, ratio: rates.ratio))
        report.emit(
            BenchResult(
                name: "v1 message 100B (encrypt+decrypt) time", value: 1e6 / rates.ours, unit: "µs/message",
                baseline: 1e6 / rates.baseline, ratio: rates.ratio))
        // The same work timed by this thread's CPU clock: what a message costs, without the
        // time other processes hold the core (on a shared host the wall clock overstates it).
        let cpu = Bench.cpuTimes(ours: ours, baseline: baseline, calls: max(1_000, Int(20_000 * options.seconds)))
        report.emit(
            BenchResult(
                name: "v1 message 100B (encrypt+decrypt) CPU time", value: cpu.ours * 1e6, unit: "µs/message",
                baseline: cpu.baseline * 1e6, ratio: cpu.baseline / cpu.ours))
    }
}
