import Crypto
import Foundation
import InvisoNoise
import InvisoTesting
import Testing

/// Runs every applicable vector of `shared/vectors/noise/` (see its README for schemas and
/// sources: cacophony, snow, noise-c). Fails if any applicable vector fails or if fewer
/// than the 1,008 applicable vectors ran; prints counts by file and skips by reason.
@Suite("Noise test vectors")
struct NoiseVectorTests {
    static let expectedApplicable: [String: Int] = [
        "cacophony.txt": 472, "snow.txt": 408, "noise-c-basic.txt": 120, "noise-c-fallback.txt": 8,
    ]

    @Test("all 1008 applicable public vectors pass", .enabled(if: SharedVectors.present("noise"), SharedVectors.skipComment))
    func allApplicableVectorsPass() async throws {
        guard let directory = SharedVectors.url("noise") else {
            if SharedVectors.isCI { Issue.record("shared/vectors/noise is missing under CI=true") }
            print(SharedVectors.skipMessage("Noise vectors"))
            return
        }
        var passed: [String: Int] = [:]
        var skipped: [String: Int] = [:]
        var failures: [String] = []
        var hashesChecked = 0
        for file in Self.expectedApplicable.keys.sorted() {
            // Between files: let the other tests' tasks run (this test computes for seconds).
            await Task.yield()
            let vectors = try NoiseVector.load(directory.appendingPathComponent(file))
            for vector in vectors {
                let name = vector.fullName
                if name.contains("_448_") {
                    skipped["DH 448 (not implemented)", default: 0] += 1
                    continue
                }
                if name.hasPrefix("NoisePSK_") {
                    skipped["legacy NoisePSK_ naming (pre-rev32 PSK scheme)", default: 0] += 1
                    continue
                }
                do {
                    let checkedHash = try vector.fallback == true ? runFallback(vector) : run(vector)
                    if checkedHash { hashesChecked += 1 }
                    passed[file, default: 0] += 1
                } catch {
                    failures.append("\(file): \(name): \(error)")
                }
            }
        }
        let total = passed.values.reduce(0, +)
        print("Noise vectors: \(total) passed, \(failures.count) failed, \(skipped.values.reduce(0, +)) skipped; handshake hashes checked: \(hashesChecked)")
        for (file, count) in passed.sorted(by: { $0.key < $1.key }) { print("  \(file): \(count) passed") }
        for (reason, count) in skipped.sorted(by: { $0.key < $1.key }) { print("  skipped \(count): \(reason)") }
        for failure in failures.prefix(20) { print("  FAILED \(failure)") }
        #expect(failures.isEmpty)
        #expect(total >= 1008, "only \(total) applicable vectors ran")
        for (file, expected) in Self.expectedApplicable {
            #expect(passed[file, default: 0] == expected, "\(file): \(passed[file, default: 0]) of \(expected)")
        }
    }

    /// Runs a regular (schema A or B) vector; returns whether a handshake hash was compared.
    private func run(_ vector: NoiseVector) throws -> Bool {
        let noiseProtocol = try NoiseProtocol(vector.fullName)
        let pattern = noiseProtocol.pattern
        var initiator = try HandshakeState(
            noiseProtocol, role: .initiator, prologue: try bytes(vector.initPrologue),
            localStatic: try keyPair(vector.initStatic), localEphemeral: try keyPair(vector.initEphemeral),
            remoteStatic: pattern.preMessage(of: .responder).contains(.s) ? try bytes(vector.initRemoteStatic) : nil,
            preSharedKeys: try (vector.initPsks ?? []).map { SymmetricKey(data: try bytes($0)) })
        var responder = try HandshakeState(
            noiseProtocol, role: .responder, prologue: try bytes(vector.respPrologue),
            localStatic: try keyPair(vector.respStatic),
            localEphemeral: pattern.isOneWay ? nil : try keyPair(vector.respEphemeral),
            remoteStatic: pattern.preMessage(of: .initiator).contains(.s) ? try bytes(vector.respRemoteStatic) : nil,
            preSharedKeys: try (vector.respPsks ?? []).map { SymmetricKey(data: try bytes($0)) })
        var initiatorTransport: NoiseTransport?
        var responderTransport: NoiseTransport?
        for (index, message) in vector.messages.enumerated() {
            let payload = try bytes(message.payload)
            let expected = try bytes(message.ciphertext)
            let initiatorSends = pattern.isOneWay || index % 2 == 0
            if !initiator.isComplete {
                let written = initiatorSends ? try initiator.writeMessage(payload) : try responder.writeMessage(payload)
                guard written == expected else { throw VectorMismatch("handshake message \(index) ciphertext") }
                let read = initiatorSends ? try responder.readMessage(written) : try initiator.readMessage(written)
                guard read == payload else { throw VectorMismatch("handshake message \(index) payload") }
                if initiator.isComplete {
                    guard responder.isComplete else { throw VectorMismatch("completion disagrees") }
                    initiatorTransport = try initiator.transport()
                    responderTransport = try responder.transport()
                }
            } else {
                let written = initiatorSends ? try initiatorTransport!.encrypt(payload) : try responderTransport!.encrypt(payload)
                guard written == expected else { throw VectorMismatch("transport message \(index) ciphertext") }
                let read = initiatorSends ? try responderTransport!.decrypt(written) : try initiatorTransport!.decrypt(written)
                guard read == payload else { throw VectorMismatch("transport message \(index) payload") }
            }
        }
        guard initiator.isComplete else { throw VectorMismatch("handshake did not complete") }
        guard initiator.handshakeHash == responder.handshakeHash else { throw VectorMismatch("handshake hashes differ") }
        if let hash = vector.handshakeHash {
            guard initiator.handshakeHash == (try bytes(hash)) else { throw VectorMismatch("handshake hash") }
            return true
        }
        return false
    }

    /// Runs a Noise Pipes vector: a failing IK first message, then XXfallback with roles swapped.
    private func runFallback(_ vector: NoiseVector) throws -> Bool {
        let suffix = vector.fullName.dropFirst("Noise_XXfallback_".count)
        let ik = try NoiseProtocol("Noise_IK_\(suffix)")
        var alice = try HandshakeState(
            ik, role: .initiator, prologue: try bytes(vector.initPrologue), localStatic: try keyPair(vector.initStatic),
            localEphemeral: try keyPair(vector.initEphemeral), remoteStatic: try bytes(vector.initRemoteStatic))
        let bob = try HandshakeState(
            ik, role: .responder, prologue: try bytes(vector.respPrologue), localStatic: try keyPair(vector.respStatic),
            localEphemeral: try keyPair(vector.respEphemeral))
        let messages = try vector.messages.map { (try bytes($0.payload), try bytes($0.ciphertext)) }
        let first = try alice.writeMessage(messages[0].0)
        guard first == messages[0].1 else { throw VectorMismatch("IK message ciphertext") }
        var bobCopy = bob
        guard (try? bobCopy.readMessage(first)) == nil else { throw VectorMismatch("IK message unexpectedly decrypted") }
        var bobFallback = try bob.fallback(firstMessage: first)
        var aliceFallback = try alice.fallback()
        let second = try bobFallback.writeMessage(messages[1].0)
        guard second == messages[1].1 else { throw VectorMismatch("fallback message 1 ciphertext") }
        guard try aliceFallback.readMessage(second) == messages[1].0 else { throw VectorMismatch("fallback message 1 payload") }
        let third = try aliceFallback.writeMessage(messages[2].0)
        guard third == messages[2].1 else { throw VectorMismatch("fallback message 2 ciphertext") }
        guard try bobFallback.readMessage(third) == messages[2].0 else { throw VectorMismatch("fallback message 2 payload") }
        guard bobFallback.isComplete, aliceFallback.isComplete else { throw VectorMismatch("fallback incomplete") }
        var bobTransport = try bobFallback.transport()
        var aliceTransport = try aliceFallback.transport()
        for index in 3..<messages.count {
            let (payload, expected) = messages[index]
            let bobSends = index % 2 == 1
            let written = bobSends ? try bobTransport.encrypt(payload) : try aliceTransport.encrypt(payload)
            guard written == expected else { throw VectorMismatch("transport message \(index) ciphertext") }
            let read = bobSends ? try aliceTransport.decrypt(written) : try bobTransport.decrypt(written)
            guard read == payload else { throw VectorMismatch("transport message \(index) payload") }
        }
        if let hash = vector.handshakeHash {
            guard bobFallback.handshakeHash == (try bytes(hash)), aliceFallback.handshakeHash == bobFallback.handshakeHash else {
                throw VectorMismatch("handshake hash")
            }
            return true
        }
        return false
    }

    private func bytes(_ hex: String?) throws -> [UInt8] {
        guard let hex else { return [] }
        guard let value = [UInt8](hex: hex) else { throw VectorMismatch("bad hex in vector") }
        return value
    }

    private func keyPair(_ hex: String?) throws -> NoiseKeyPair? {
        guard let hex else { return nil }
        return try NoiseKeyPair(rawPrivateKey: try bytes(hex))
    }
}

struct VectorMismatch: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
