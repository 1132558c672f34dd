import InvisoCrypto
import ArgumentParser
import Crypto
import Foundation
import InvisoNoise

/// `inviso noise keygen`: prints a fresh Curve25519 key pair.
struct NoiseKeygen: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Generate a Curve25519 static key pair; prints {\"private\":…,\"public\":…}."
    )

    func run() throws {
        let pair = NoiseKeyPair.generate()
        let privateHex = Hex.encode(pair.privateKey.rawRepresentation)
        JSONLines.emit(["private": .string(privateHex), "public": .string(Hex.encode(pair.publicKey))])
    }
}
