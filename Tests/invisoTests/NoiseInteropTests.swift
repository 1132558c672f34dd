import Foundation
import Testing
import InvisoTesting

/// End-to-end interop: two `inviso noise` processes talk over 127.0.0.1.
///
/// The tests drive the built `inviso` executable (`swift build` builds it; `swift test`
/// builds it too). Set `INVISO_BINARY` to test another build.
@Suite("inviso noise interop", .serialized, .timeLimit(.minutes(6)))
struct NoiseInteropTests {
    /// How long any single child process may take.
    static let timeout: TimeInterval = 20

    /// One interop scenario: which static keys each side knows in advance and which it
    /// should end up knowing.
    struct Scenario: CustomTestStringConvertible, Sendable {
        var protocolName: String
        /// The initiator gets `--remote-static` (the responder's key is a pre-message).
        var initiatorPreKnowsResponder = false
        /// The responder gets `--remote-static` (the initiator's key is a pre-message).
        var responderPreKnowsInitiator = false
        /// The responder ends up with the initiator's static key.
        var responderLearnsInitiator = true
        var pskCount = 0
        var oneWay = false

        var testDescription: String { protocolName }
    }

    static let scenarios: [Scenario] = [
        Scenario(protocolName: "Noise_XX_25519_ChaChaPoly_SHA256"),
        Scenario(protocolName: "Noise_IK_25519_ChaChaPoly_SHA256", initiatorPreKnowsResponder: true),
        Scenario(protocolName: "Noise_NK_25519_ChaChaPoly_SHA256", initiatorPreKnowsResponder: true, responderLearnsInitiator: false),
        Scenario(protocolName: "Noise_XXpsk3_25519_ChaChaPoly_SHA256", pskCount: 1),
        Scenario(protocolName: "Noise_N_25519_ChaChaPoly_SHA256", initiatorPreKnowsResponder: true,
                 responderLearnsInitiator: false, oneWay: true),
        Scenario(protocolName: "Noise_X1X1_25519_ChaChaPoly_SHA256"),
        Scenario(protocolName: "Noise_XK1_25519_AESGCM_BLAKE2s", initiatorPreKnowsResponder: true),
        Scenario(protocolName: "Noise_KK_25519_ChaChaPoly_SHA512", initiatorPreKnowsResponder: true,
                 responderPreKnowsInitiator: true),
    ]

    static let lines = ["hello, responder", "second line: ünïcødé ✓ and \"quotes\" \\ backslash", "third"]

    @Test("session over loopback", arguments: scenarios)
    func session(_ scenario: Scenario) async throws {
        let binary = try Self.invisoBinary()
        let initiatorKeys = try await Self.keygen(binary)
        let responderKeys = try await Self.keygen(binary)
        let psks = (0..<scenario.pskCount).map { _ in Self.randomHex(32) }
        let prologue = Self.randomHex(7)

        var listenArguments = ["noise", "listen", "--port", "0", "--once", "--echo", "--protocol", scenario.protocolName,
                               "--static-private", responderKeys.private, "--prologue", prologue]
        if scenario.responderPreKnowsInitiator { listenArguments += ["--remote-static", initiatorKeys.public] }
        for psk in psks { listenArguments += ["--psk", psk] }
        let responder = try ChildProcess(binary, listenArguments)
        defer { responder.kill() }
        let port = try #require(await Self.listeningPort(responder), "responder never reported its port\n\(responder.transcript)")

        var connectArguments = ["noise", "connect", "127.0.0.1:\(port)", "--protocol", scenario.protocolName,
                                "--static-private", initiatorKeys.private, "--prologue", prologue]
        if scenario.initiatorPreKnowsResponder { connectArguments += ["--remote-static", responderKeys.public] }
        for psk in psks { connectArguments += ["--psk", psk] }
        let initiator = try ChildProcess(binary, connectArguments)
        defer { initiator.kill() }
        initiator.write(Self.lines.map { $0 + "\n" }.joined())
        initiator.closeInput()

        let initiatorStatus = await initiator.waitForExit(timeout: Self.timeout)
        let responderStatus = await responder.waitForExit(timeout: Self.timeout)
        #expect(initiatorStatus == 0, "initiator\n\(initiator.transcript)")
        #expect(responderStatus == 0, "responder\n\(responder.transcript)")

        let initiatorEvents = initiator.events
        let responderEvents = responder.events
        let initiatorHandshake = try #require(initiatorEvents.first { $0["event"] as? String == "handshake" },
                                              "initiator\n\(initiator.transcript)")
        let responderHandshake = try #require(responderEvents.first { $0["event"] as? String == "handshake" },
                                              "responder\n\(responder.transcript)")
        let hash = try #require(initiatorHandshake["handshake_hash"] as? String)
        #expect(hash.count == 64 || hash.count == 128)
        #expect(responderHandshake["handshake_hash"] as? String == hash)

        // Every scenario authenticates the responder's static key to the initiator.
        #expect(initiatorHandshake["remote_static"] as? String == responderKeys.public)
        if scenario.responderLearnsInitiator {
            #expect(responderHandshake["remote_static"] as? String == initiatorKeys.public)
        } else {
            #expect(responderHandshake["remote_static"] is NSNull)
        }

        #expect(Self.receivedTexts(responderEvents) == Self.lines)
        #expect(Self.receivedHex(responderEvents) == Self.lines.map { Self.hex(Array($0.utf8)) })
        #expect(Self.receivedTexts(initiatorEvents) == (scenario.oneWay ? [] : Self.lines))
        #expect(!initiatorEvents.contains { $0["event"] as? String == "error" })
        #expect(!responderEvents.contains { $0["event"] as? String == "error" })
        for events in [initiatorEvents, responderEvents] {
            for secret in [initiatorKeys.private, responderKeys.private] + psks {
                #expect(!events.contains { "\($0)".contains(secret) }, "a secret was printed")
            }
        }
    }

    @Test("wrong PSK in the first message: both sides fail")
    func wrongPSKFirstMessage() async throws {
        let (initiator, responder) = try await Self.runMismatchedPSK("Noise_NNpsk0_25519_ChaChaPoly_SHA256")
        #expect(responder.status != 0 && responder.status != nil, "responder\n\(responder.transcript)")
        #expect(initiator.status != 0 && initiator.status != nil, "initiator\n\(initiator.transcript)")
        #expect(responder.errors.contains("authentication failed"), "responder\n\(responder.transcript)")
        #expect(!initiator.errors.isEmpty, "initiator\n\(initiator.transcript)")
        #expect(!initiator.hasHandshake && !responder.hasHandshake)
    }

    @Test("wrong PSK in XXpsk3: the responder fails, nothing is echoed")
    func wrongPSKLastMessage() async throws {
        let (initiator, responder) = try await Self.runMismatchedPSK("Noise_XXpsk3_25519_ChaChaPoly_SHA256")
        #expect(responder.status != 0 && responder.status != nil, "responder\n\(responder.transcript)")
        #expect(responder.errors.contains("authentication failed"), "responder\n\(responder.transcript)")
        #expect(!responder.hasHandshake)
        // The initiator finished its side of the handshake and may see a close or a reset;
        // either way nothing comes back.
        #expect(initiator.status != nil, "initiator hung\n\(initiator.transcript)")
        #expect(initiator.received.isEmpty)
    }

    @Test("IK initiator without --remote-static reports the missing key")
    func missingRemoteStatic() async throws {
        let binary = try Self.invisoBinary()
        let keys = try await Self.keygen(binary)
        let initiator = try ChildProcess(binary, ["noise", "connect", "127.0.0.1:9", "--protocol",
                                                  "Noise_IK_25519_ChaChaPoly_SHA256", "--static-private", keys.private])
        initiator.closeInput()
        let status = await initiator.waitForExit(timeout: Self.timeout)
        #expect(status != 0 && status != nil)
        let events = initiator.events
        #expect(events.count == 1)
        let error = try #require(events.first?["error"] as? String, "\(initiator.transcript)")
        #expect(events.first?["event"] as? String == "error")
        #expect(error.contains("missing"))
        #expect(!initiator.transcript.contains(keys.private))
    }

    @Test("XX without --static-private: each side uses a fresh key and reports its public half")
    func generatedStaticKeys() async throws {
        let binary = try Self.invisoBinary()
        let responder = try ChildProcess(binary, ["noise", "listen", "--port", "0", "--once", "--echo"])
        defer { responder.kill() }
        let port = try #require(await Self.listeningPort(responder), "responder never reported its port\n\(responder.transcript)")
        let initiator = try ChildProcess(binary, ["noise", "connect", "127.0.0.1:\(port)"])
        defer { initiator.kill() }
        initiator.write("ping\n")
        initiator.closeInput()
        #expect(await initiator.waitForExit(timeout: Self.timeout) == 0, "initiator\n\(initiator.transcript)")
        #expect(await responder.waitForExit(timeout: Self.timeout) == 0, "responder\n\(responder.transcript)")
        func generatedKey(_ events: [[String: Any]]) -> String? {
            events.first { $0["event"] as? String == "static_key" }?["public"] as? String
        }
        func remoteStatic(_ events: [[String: Any]]) -> String? {
            events.first { $0["event"] as? String == "handshake" }?["remote_static"] as? String
        }
        let initiatorKey = try #require(generatedKey(initiator.events))
        let responderKey = try #require(generatedKey(responder.events))
        #expect(remoteStatic(initiator.events) == responderKey)
        #expect(remoteStatic(responder.events) == initiatorKey)
        #expect(Self.receivedTexts(initiator.events) == ["ping"])
    }

    @Test("keygen prints a usable key pair")
    func keygen() async throws {
        let keys = try await Self.keygen(try Self.invisoBinary())
        #expect(keys.private.count == 64 && keys.public.count == 64)
        #expect(keys.private != keys.public)
    }

    // MARK: Helpers

    struct Outcome {
        var status: Int32?
        var events: [[String: Any]]
        var transcript: String

        var errors: String { events.filter { $0["event"] as? String == "error" }.compactMap { $0["error"] as? String }.joined(separator: "; ") }
        var hasHandshake: Bool { events.contains { $0["event"] as? String == "handshake" } }
        var received: [String] { NoiseInteropTests.receivedTexts(events) }
    }

    static func runMismatchedPSK(_ protocolName: String) async throws -> (initiator: Outcome, responder: Outcome) {
        let binary = try invisoBinary()
        let initiatorKeys = try await keygen(binary)
        let responderKeys = try await keygen(binary)
        let responder = try ChildProcess(binary, ["noise", "listen", "--port", "0", "--once", "--echo", "--protocol", protocolName,
                                                  "--static-private", responderKeys.private, "--psk", randomHex(32)])
        defer { responder.kill() }
        let port = try #require(await listeningPort(responder), "responder never reported its port\n\(responder.transcript)")
        let initiator = try ChildProcess(binary, ["noise", "connect", "127.0.0.1:\(port)", "--protocol", protocolName,
                                                  "--static-private", initiatorKeys.private, "--psk", randomHex(32)])
        defer { initiator.kill() }
        initiator.write(lines.map { $0 + "\n" }.joined())
        initiator.closeInput()
        let initiatorStatus = await initiator.waitForExit(timeout: timeout)
        let responderStatus = await responder.waitForExit(timeout: timeout)
        return (Outcome(status: initiatorStatus, events: initiator.events, transcript: initiator.transcript),
                Outcome(status: responderStatus, events: responder.events, transcript: responder.transcript))
    }

    static func listeningPort(_ responder: ChildProcess) async -> Int? {
        let event = await responder.waitForEvent(timeout: timeout) { $0["event"] as? String == "listening" }
        return event?["port"] as? Int
    }

    static func keygen(_ binary: URL) async throws -> (private: String, public: String) {
        let child = try ChildProcess(binary, ["noise", "keygen"])
        child.closeInput()
        let status = await child.waitForExit(timeout: timeout)
        try #require(status == 0, "keygen failed\n\(child.transcript)")
        let object = try #require(child.events.first)
        let privateKey = try #require(object["private"] as? String)
        let publicKey = try #require(object["public"] as? String)
        return (privateKey, publicKey)
    }

    static func receivedTexts(_ events: [[String: Any]]) -> [String] {
        events.filter { $0["event"] as? String == "received" }.compactMap { $0["text"] as? String }
    }

    static func receivedHex(_ events: [[String: Any]]) -> [String] {
        events.filter { $0["event"] as? String == "received" }.compactMap { $0["hex"] as? String }
    }

    static func randomHex(_ count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return hex((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// Finds the `inviso` executable (``InvisoExecutable/locate()``).
    static func invisoBinary() throws -> URL {
        try InvisoExecutable.locate()
    }
}
