import InvisoCrypto
import InvisoSignal
import InvisoTesting
import Testing

@Suite("Curve25519 public keys")
struct ECPublicKeyTests {
    /// p = 2²⁵⁵ − 19, little-endian.
    static let fieldPrime: [UInt8] = [0xed] + [UInt8](repeating: 0xff, count: 30) + [0x7f]

    @Test("Canonical u-coordinates round-trip: 0, p − 1, generated keys")
    func canonical() throws {
        var largest = Self.fieldPrime
        largest[0] = 0xec
        for raw in [[UInt8](repeating: 0, count: 32), largest] {
            let key = try ECPublicKey(rawRepresentation: raw)
            #expect(key.rawRepresentation == raw)
            #expect(try ECPublicKey(serialized: key.serialized) == key)
        }
        var random = SeededGenerator(seed: 25519)
        for _ in 0..<50 {
            let key = ECKeyPair.generate(using: &random).publicKey
            #expect(try ECPublicKey(serialized: key.serialized) == key)
        }
    }

    @Test("Non-canonical encodings are rejected: bit 255 set, u in p … 2²⁵⁵ − 1")
    func nonCanonical() throws {
        var random = SeededGenerator(seed: 7748)
        var highBit = ECKeyPair.generate(using: &random).publicKey.rawRepresentation
        highBit[31] |= 0x80
        var aboveP = Self.fieldPrime
        aboveP[0] = 0xf0
        for raw in [highBit, Self.fieldPrime, aboveP, [UInt8](repeating: 0xff, count: 32)] {
            #expect(throws: SignalError.self) { try ECPublicKey(rawRepresentation: raw) }
            #expect(throws: SignalError.self) { try ECPublicKey(serialized: [ECPublicKey.typeByte] + raw) }
        }
    }
}
