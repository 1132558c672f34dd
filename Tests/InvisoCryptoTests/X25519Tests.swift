import Crypto
import InvisoCrypto
import InvisoTesting
import Testing

@Suite("X25519 and secret bytes")
struct X25519Tests {
    @Test("RFC 7748 §6.1 Diffie-Hellman vector")
    func rfc7748() throws {
        // RFC 7748 §6.1: Alice's and Bob's private keys and their shared secret.
        let alice = try Curve25519.KeyAgreement.PrivateKey(
            rawRepresentation: [UInt8](hex: "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")!)
        let bobPublic = [UInt8](hex: "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")!
        let shared = try X25519.sharedSecret(alice, with: bobPublic)
        #expect(shared == SecretBytes([UInt8](hex: "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")!))
    }

    @Test("low-order public keys give a typed error, never an all-zero secret", arguments: [
        "0000000000000000000000000000000000000000000000000000000000000000",
        "0100000000000000000000000000000000000000000000000000000000000000",
        "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
        "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    ])
    func lowOrder(hex: String) {
        let key = Curve25519.KeyAgreement.PrivateKey()
        #expect(throws: X25519Error.allZeroSharedSecret) { try X25519.sharedSecret(key, with: [UInt8](hex: hex)!) }
    }

    @Test("wrong-length public keys are rejected", arguments: [0, 31, 33, 64])
    func wrongLength(count: Int) {
        #expect(throws: X25519Error.invalidPublicKey) {
            try X25519.sharedSecret(Curve25519.KeyAgreement.PrivateKey(), with: [UInt8](repeating: 9, count: count))
        }
    }

    @Test("secret bytes never print their contents and compare by value")
    func secretBytes() {
        let secret = SecretBytes([0xde, 0xad, 0xbe, 0xef])
        #expect(!secret.description.contains("de"))
        #expect(!"\(secret)".contains("222"))
        #expect(String(reflecting: secret) == "SecretBytes(<redacted 4 bytes>)")
        var dumped = ""
        dump(secret, to: &dumped)
        #expect(!dumped.contains("222") && !dumped.contains("173"))
        #expect(secret == SecretBytes([0xde, 0xad, 0xbe, 0xef]))
        #expect(secret != SecretBytes([0xde, 0xad, 0xbe, 0xee]))
        #expect(secret != SecretBytes([0xde, 0xad, 0xbe]))
        #expect(SecretBytes([UInt8]()).count == 0)
        var random = SeededGenerator(seed: 3)
        #expect(SecretBytes(randomCount: 13, using: &random).count == 13)
    }

    @Test("constant-time helpers")
    func constantTime() {
        #expect(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2, 4]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2]))
        #expect([UInt8](repeating: 0, count: 32).withUnsafeBytes { ConstantTime.isAllZero($0) })
        #expect(![UInt8](repeating: 0, count: 31).appending(1).withUnsafeBytes { ConstantTime.isAllZero($0) })
    }
}

private extension Array where Element == UInt8 {
    func appending(_ byte: UInt8) -> [UInt8] { self + [byte] }
}
