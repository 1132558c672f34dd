import InvisoCrypto
import ArgumentParser
import Crypto
import InvisoNoise

/// Options shared by `listen` and `connect`: the protocol and the keys it needs.
struct NoiseSessionOptions: ParsableArguments {
    @Option(name: .customLong("protocol"), help: "Noise protocol name.")
    var protocolName = "Noise_XX_25519_ChaChaPoly_SHA256"

    @Option(help: ArgumentHelp(
        "This side's static private key (32 bytes, hex). When the pattern needs one and none is given, a fresh key is used and its public half printed.",
        valueName: "hex"))
    var staticPrivate: String?

    @Option(help: ArgumentHelp("The peer's static public key, for patterns that pre-share it (hex).", valueName: "hex"))
    var remoteStatic: String?

    @Option(help: ArgumentHelp("A 32-byte pre-shared key (hex); repeat in psk-token order.", valueName: "hex"))
    var psk: [String] = []

    @Option(help: ArgumentHelp("Prologue bytes both sides must agree on (hex).", valueName: "hex"))
    var prologue: String?

    /// Parses the options into everything needed to start handshakes. Error messages name
    /// the offending option but never echo its (possibly secret) value.
    func makeHandshakeFactory(role: NoiseRole) throws -> HandshakeFactory {
        let noiseProtocol = try NoiseProtocol(protocolName)
        var localStatic: NoiseKeyPair?
        if let staticPrivate {
            guard let bytes = Hex.decode(staticPrivate) else { throw CLIError("--static-private is not valid hex") }
            guard bytes.count == 32 else { throw CLIError("--static-private must be 32 bytes") }
            localStatic = try NoiseKeyPair(rawPrivateKey: bytes)
        } else if noiseProtocol.pattern.needsLocalStatic(role) {
            // No identity given: use a fresh one for this run and say which (public half only).
            let generated = NoiseKeyPair.generate()
            localStatic = generated
            JSONLines.emit(["event": .string("static_key"), "public": .string(Hex.encode(generated.publicKey)),
                            "generated": .bool(true)])
        }
        var remote: [UInt8]?
        if let remoteStatic {
            guard let bytes = Hex.decode(remoteStatic) else { throw CLIError("--remote-static is not valid hex") }
            remote = bytes
        }
        var keys: [SymmetricKey] = []
        for (index, text) in psk.enumerated() {
            guard let bytes = Hex.decode(text) else { throw CLIError("--psk #\(index + 1) is not valid hex") }
            keys.append(SymmetricKey(data: bytes))
        }
        var prologueBytes: [UInt8] = []
        if let prologue {
            guard let bytes = Hex.decode(prologue) else { throw CLIError("--prologue is not valid hex") }
            prologueBytes = bytes
        }
        let factory = HandshakeFactory(noiseProtocol: noiseProtocol, role: role, prologue: prologueBytes,
                                       localStatic: localStatic, remoteStatic: remote, preSharedKeys: keys)
        // Fail before touching the network if a key is missing, unexpected or malformed.
        _ = try factory.make()
        return factory
    }
}

/// Everything needed to start a fresh handshake for each connection.
struct HandshakeFactory: Sendable {
    let noiseProtocol: NoiseProtocol
    let role: NoiseRole
    let prologue: [UInt8]
    let localStatic: NoiseKeyPair?
    let remoteStatic: [UInt8]?
    let preSharedKeys: [SymmetricKey]

    func make() throws(NoiseError) -> HandshakeState {
        try HandshakeState(noiseProtocol, role: role, prologue: prologue, localStatic: localStatic,
                           remoteStatic: remoteStatic, preSharedKeys: preSharedKeys)
    }
}
