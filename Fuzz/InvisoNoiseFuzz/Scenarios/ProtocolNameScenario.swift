internal import InvisoNoise
internal import InvisoFuzzSupport

/// Scenario 3: `NoiseProtocol(name)` on the rest of the input decoded as UTF-8 (invalid
/// sequences become U+FFFD). A name that parses must round-trip and must run: two parties
/// built with the fixed keys complete its handshake and agree on everything.
enum ProtocolNameScenario {
    static func run(_ input: inout FuzzInput, keys: FuzzKeys) {
        let name = String(decoding: input.rest(), as: UTF8.self)
        let parsed: NoiseProtocol
        do throws(NoiseError) {
            parsed = try NoiseProtocol(name)
        } catch {
            let allowed: [NoiseError] = [.invalidProtocolName, .unsupportedAlgorithm, .invalidPattern]
            invariant(allowed.contains(error), "parsing a name failed with unexpected \(error)")
            return
        }
        invariant(name.utf8.count <= NoiseProtocol.maximumNameLength, "accepted a name longer than 255 bytes")
        invariant(parsed.name == name, "parsed name differs from the input")
        let again = mustSucceed("re-parsing an accepted name") { () throws(NoiseError) in try NoiseProtocol(parsed.name) }
        invariant(again == parsed, "parsing is not deterministic")
        invariant(!parsed.pattern.messages.isEmpty, "accepted a pattern without messages")
        handshake(parsed, keys: keys)
    }

    /// Runs the whole handshake; every step must succeed because all keys are genuine.
    static func handshake(_ noiseProtocol: NoiseProtocol, keys: FuzzKeys) {
        let name = noiseProtocol.name
        let parties = mustSucceed("\(name): initialising both parties") { () throws(NoiseError) in
            try Transcript.parties(noiseProtocol, keys: keys)
        }
        let transcript = Transcript(initiator: parties.initiator, responder: parties.responder)
        var initiator = transcript.initiatorTransport
        var responder = transcript.responderTransport
        invariant(initiator.handshakeHash == responder.handshakeHash, "\(name): transports disagree on the hash")
        let toResponder = mustSucceed("\(name): initiator encrypting") { () throws(NoiseError) in try initiator.encrypt([1]) }
        let received = mustSucceed("\(name): responder decrypting") { () throws(NoiseError) in try responder.decrypt(toResponder) }
        invariant(received == [1], "\(name): transport plaintext differs")
        if noiseProtocol.pattern.isOneWay {
            invariant(initiator.receiver == nil && responder.sender == nil, "\(name): one-way transport goes both ways")
        } else {
            let toInitiator = mustSucceed("\(name): responder encrypting") { () throws(NoiseError) in try responder.encrypt([2]) }
            let back = mustSucceed("\(name): initiator decrypting") { () throws(NoiseError) in try initiator.decrypt(toInitiator) }
            invariant(back == [2], "\(name): transport plaintext differs")
        }
    }
}
