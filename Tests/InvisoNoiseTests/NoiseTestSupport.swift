import Crypto
import InvisoNoise
import InvisoTesting

/// Builds a matching initiator/responder pair for any protocol name with fresh keys.
struct HandshakePair {
    var initiator: HandshakeState
    var responder: HandshakeState

    init(_ name: String, prologue: [UInt8] = [], responderPrologue: [UInt8]? = nil, psks: [SymmetricKey]? = nil,
         seed: UInt64 = 1) throws {
        let noiseProtocol = try NoiseProtocol(name)
        let pattern = noiseProtocol.pattern
        var random = SeededGenerator(seed: seed)
        let initiatorStatic = try NoiseKeyPair(rawPrivateKey: random.bytes(32))
        let responderStatic = try NoiseKeyPair(rawPrivateKey: random.bytes(32))
        let keys = psks ?? (0..<pattern.preSharedKeyCount).map { _ in SymmetricKey(data: random.bytes(32)) }
        let initiatorEphemeral = pattern.preMessage(of: .initiator).contains(.e) ? try NoiseKeyPair(rawPrivateKey: random.bytes(32)) : nil
        let responderEphemeral = pattern.preMessage(of: .responder).contains(.e) ? try NoiseKeyPair(rawPrivateKey: random.bytes(32)) : nil
        initiator = try HandshakeState(
            noiseProtocol, role: .initiator, prologue: prologue, localStatic: initiatorStatic, localEphemeral: initiatorEphemeral,
            remoteStatic: pattern.preMessage(of: .responder).contains(.s) ? responderStatic.publicKey : nil,
            remoteEphemeral: responderEphemeral?.publicKey, preSharedKeys: keys)
        responder = try HandshakeState(
            noiseProtocol, role: .responder, prologue: responderPrologue ?? prologue, localStatic: responderStatic,
            localEphemeral: responderEphemeral,
            remoteStatic: pattern.preMessage(of: .initiator).contains(.s) ? initiatorStatic.publicKey : nil,
            remoteEphemeral: initiatorEphemeral?.publicKey, preSharedKeys: keys)
    }

    /// Runs the whole handshake with empty payloads; returns both transports.
    mutating func complete() throws -> (NoiseTransport, NoiseTransport) {
        while !initiator.isComplete {
            if initiator.isWriteTurn {
                _ = try responder.readMessage(try initiator.writeMessage([1, 2, 3]))
            } else {
                _ = try initiator.readMessage(try responder.writeMessage([4, 5]))
            }
        }
        return (try initiator.transport(), try responder.transport())
    }
}
