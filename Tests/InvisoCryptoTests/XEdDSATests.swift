import Crypto
import Foundation
import InvisoCrypto
import InvisoTesting
import Testing

@Suite("XEdDSA")
struct XEdDSATests {
    // MARK: libsignal vectors

    /// Runs every entry of shared/vectors/signal/curve25519.json (libsignal
    /// rust/core/src/curve/curve25519.rs at b056faa6dd02961cff24064c54c089c52e1a0753; see
    /// the file's `source` fields and shared/vectors/signal/README.md).
    @Test("libsignal curve25519.json: X25519 agreement and the XEdDSA signature vector", .enabled(if: SharedVectors.present("signal/curve25519.json"), SharedVectors.skipComment))
    func libsignalVectors() throws {
        guard let url = SharedVectors.url("signal/curve25519.json") else {
            if SharedVectors.isCI { Issue.record("shared/vectors/signal/curve25519.json is missing under CI=true") }
            print(SharedVectors.skipMessage("libsignal curve25519 vectors"))
            return
        }
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let vectors = try #require(root["vectors"] as? [[String: Any]])
        var ran = 0
        for vector in vectors {
            let name = vector["name"] as? String ?? ""
            let inputs = try #require(vector["inputs"] as? [String: Any])
            let expected = try #require(vector["expected"] as? [String: Any])
            func bytes(_ dictionary: [String: Any], _ key: String) throws -> [UInt8] {
                try #require((dictionary[key] as? String).flatMap { [UInt8](hex: $0) }, "\(name): \(key)")
            }
            switch name {
            case "curve25519_test_agreement":
                try runAgreement(
                    alicePrivate: bytes(inputs, "alice_private"), bobPrivate: bytes(inputs, "bob_private"),
                    alicePublic: bytes(expected, "alice_public"), bobPublic: bytes(expected, "bob_public"),
                    shared: bytes(expected, "shared_secret"))
            case "curve25519_test_signature":
                let derived = try #require(vector["derived_not_in_source"] as? [String: Any])
                #expect(expected["verify"] as? Bool == true)
                try runSignature(
                    identityPrivate: bytes(inputs, "identity_private"), message: bytes(inputs, "message"),
                    identityPublic: bytes(expected, "identity_public"), signature: bytes(expected, "signature"),
                    signBit: try #require(expected["sign_bit"] as? Int),
                    edwardsPublic: bytes(derived, "edwards_public_key_with_sign_bit"))
            default:
                Issue.record("unknown vector \(name)")
                continue
            }
            ran += 1
        }
        print("libsignal curve25519 vectors: \(ran) ran")
        #expect(ran == 2, "expected 2 libsignal vectors, ran \(ran)")
    }

    private func runAgreement(
        alicePrivate: [UInt8], bobPrivate: [UInt8], alicePublic: [UInt8], bobPublic: [UInt8], shared: [UInt8]
    ) throws {
        for (privateKey, publicKey) in [(alicePrivate, alicePublic), (bobPrivate, bobPublic)] {
            let key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: privateKey)
            #expect(Array(key.publicKey.rawRepresentation) == publicKey)
            // Our Edwards arithmetic gives the same u.
            let point = TestEd25519.clamp(privateKey).withUnsafeBytes { EdwardsPoint.multiplyBase(integer: $0) }
            #expect(point.montgomeryU.bytes == publicKey)
        }
        let alice = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: alicePrivate)
        #expect(try X25519.sharedSecret(alice, with: bobPublic) == SecretBytes(shared))
    }

    private func runSignature(
        identityPrivate: [UInt8], message: [UInt8], identityPublic: [UInt8], signature: [UInt8],
        signBit: Int, edwardsPublic: [UInt8]
    ) throws {
        // The vector's key pair is consistent, and libsignal's signer used the real sign of
        // [clamp(k)]B: the README's derived Edwards key is exactly compress([clamp(k)]B),
        // and its sign bit is the one in sig[63].
        let key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: identityPrivate)
        #expect(Array(key.publicKey.rawRepresentation) == identityPublic)
        let edwards = TestEd25519.clamp(identityPrivate).withUnsafeBytes { EdwardsPoint.multiplyBase(integer: $0) }
        #expect(edwards.compressed == edwardsPublic)
        #expect(Int(edwards.compressed[31] >> 7) == signBit)
        #expect(Int(signature[63] >> 7) == signBit)

        #expect(XEdDSA.verify(signature, for: message, publicKey: identityPublic))
        #expect(LibsignalRule.verify(publicKey: identityPublic, message: message, signature: signature))
        // The spec-strict rule (sign bit 0) rejects it, as the README says.
        #expect(!LibsignalRule.verifySpecification(publicKey: identityPublic, message: message, signature: signature))
        // With the sign bit cleared it is a plain Ed25519 signature under the Edwards key.
        var cleared = signature
        cleared[63] &= 0x7f
        #expect(TestEd25519.verify(publicKey: edwardsPublic, message: message, signature: cleared))
        #expect(!XEdDSA.verify(cleared, for: message, publicKey: identityPublic))

        // libsignal's test: flipping bit 0 of any one signature byte must fail.
        var flips = 0
        for index in 0..<64 {
            var tampered = signature
            tampered[index] ^= 0x01
            #expect(!XEdDSA.verify(tampered, for: message, publicKey: identityPublic), "byte \(index)")
            flips += 1
        }
        #expect(flips == 64)
        for index in message.indices {
            var tampered = message
            tampered[index] ^= 0x01
            #expect(!XEdDSA.verify(signature, for: tampered, publicKey: identityPublic), "message byte \(index)")
        }
        #expect(!XEdDSA.verify(signature, for: message.dropLast(), publicKey: identityPublic))
        #expect(!XEdDSA.verify(signature, for: message + [0], publicKey: identityPublic))
    }

    // MARK: Our signatures

    @Test("seeded random keys and Z: our signatures verify under ours, libsignal's rule and the specification's")
    func roundTrips() throws {
        var generator = SeededGenerator(seed: 11)
        var negated = 0
        let count = 32
        for index in 0..<count {
            let privateBytes = generator.bytes(32)
            let key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: privateBytes)
            let publicKey = Array(key.publicKey.rawRepresentation)
            let message = generator.bytes(index * 5)
            let random = generator.bytes(64)
            let signature = try XEdDSA.sign(message, with: key, random: random)
            #expect(signature.count == 64)
            #expect(signature[63] & 0x80 == 0, "the specification's signer always has sign bit 0")
            #expect(XEdDSA.verify(signature, for: message, publicKey: publicKey))
            #expect(LibsignalRule.verify(publicKey: publicKey, message: message, signature: signature))
            #expect(LibsignalRule.verifySpecification(publicKey: publicKey, message: message, signature: signature))
            // Deterministic for fixed Z, different for different Z.
            #expect(try XEdDSA.sign(message, with: key, random: random) == signature)
            #expect(try XEdDSA.sign(message, with: key, random: generator.bytes(64)) != signature)
            let edwards = TestEd25519.clamp(privateBytes).withUnsafeBytes { EdwardsPoint.multiplyBase(integer: $0) }
            if edwards.compressed[31] & 0x80 != 0 { negated += 1 }
        }
        // Both branches of calculate_key_pair (a = k and a = −k) were exercised.
        print("XEdDSA round trips: \(count) keys, \(negated) with E's sign bit 1 (a = −k)")
        #expect(negated > 0 && negated < count)
    }

    @Test("signatures made libsignal's way (sign bit of [k]B stored in sig[63]) verify under ours")
    func libsignalStyleSignatures() throws {
        var generator = SeededGenerator(seed: 12)
        var signBitSet = 0
        for _ in 0..<24 {
            let privateBytes = generator.bytes(32)
            let publicKey = Array(try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: privateBytes).publicKey.rawRepresentation)
            let message = generator.bytes(33)
            let signature = LibsignalRule.sign(privateKey: privateBytes, message: message, random: generator.bytes(64))
            if signature[63] & 0x80 != 0 { signBitSet += 1 }
            #expect(XEdDSA.verify(signature, for: message, publicKey: publicKey))
            #expect(LibsignalRule.verify(publicKey: publicKey, message: message, signature: signature))
            var flippedSign = signature
            flippedSign[63] ^= 0x80
            #expect(!XEdDSA.verify(flippedSign, for: message, publicKey: publicKey))
        }
        #expect(signBitSet > 0)
    }

    @Test("tampering: every signature byte, the message, a wrong key")
    func tampering() throws {
        var generator = SeededGenerator(seed: 13)
        let key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: generator.bytes(32))
        let publicKey = Array(key.publicKey.rawRepresentation)
        let message = Array("attack at dawn".utf8)
        let signature = try XEdDSA.sign(message, with: key, random: generator.bytes(64))
        #expect(XEdDSA.verify(signature, for: message, publicKey: publicKey))
        for index in 0..<64 {
            for bit in [0x01, 0x80] as [UInt8] {
                var tampered = signature
                tampered[index] ^= bit
                #expect(!XEdDSA.verify(tampered, for: message, publicKey: publicKey), "byte \(index) bit \(bit)")
            }
        }
        for index in message.indices {
            var tampered = message
            tampered[index] ^= 0x20
            #expect(!XEdDSA.verify(signature, for: tampered, publicKey: publicKey))
        }
        let otherKey = Array(Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation)
        #expect(!XEdDSA.verify(signature, for: message, publicKey: otherKey))
        // The system-RNG convenience signs too.
        #expect(XEdDSA.verify(XEdDSA.sign(message, with: key), for: message, publicKey: publicKey))
        var seeded = SeededGenerator(seed: 99)
        #expect(XEdDSA.verify(XEdDSA.sign(message, with: key, using: &seeded), for: message, publicKey: publicKey))
    }

    @Test("signing leaves the swift-crypto private key intact (its rawRepresentation shares the key's storage)")
    func privateKeyUntouched() throws {
        var generator = SeededGenerator(seed: 16)
        let raw = generator.bytes(32)
        let key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw)
        let peer = Curve25519.KeyAgreement.PrivateKey()
        let sharedBefore = try X25519.sharedSecret(key, with: peer.publicKey.rawRepresentation)
        let first = try XEdDSA.sign([1, 2, 3], with: key, random: [UInt8](repeating: 5, count: 64))
        _ = XEdDSA.sign([4, 5, 6], with: key)
        #expect(Array(key.rawRepresentation) == raw)
        #expect(try X25519.sharedSecret(key, with: peer.publicKey.rawRepresentation) == sharedBefore)
        #expect(try XEdDSA.sign([1, 2, 3], with: key, random: [UInt8](repeating: 5, count: 64)) == first)
    }

    @Test("invalid inputs return false or throw, never crash")
    func invalidInputs() throws {
        var generator = SeededGenerator(seed: 14)
        let key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: generator.bytes(32))
        let publicKey = Array(key.publicKey.rawRepresentation)
        let message = generator.bytes(40)
        let signature = try XEdDSA.sign(message, with: key, random: generator.bytes(64))

        for length in [0, 1, 32, 63, 65, 128] {
            let wrong = Array((signature + signature + signature).prefix(length))
            #expect(!XEdDSA.verify(wrong, for: message, publicKey: publicKey))
        }
        for length in [0, 31, 33, 64] {
            let wrong = Array((publicKey + publicKey + publicKey).prefix(length))
            #expect(!XEdDSA.verify(signature, for: message, publicKey: wrong))
        }
        for length in [0, 32, 63, 65] {
            #expect(throws: XEdDSAError.invalidRandomByteCount) {
                try XEdDSA.sign(message, with: key, random: [UInt8](repeating: 7, count: length))
            }
        }

        // s + L (still below 2^253): libsignal's rule accepts this malleated signature; ours
        // requires s < L and rejects it.
        let order = [UInt8](hex: "edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")!
        var malleated = Array(signature[0..<32])
        var carry = 0
        for index in 0..<32 {
            let sum = Int(signature[32 + index]) + Int(order[index]) + carry
            malleated.append(UInt8(sum & 0xff))
            carry = sum >> 8
        }
        #expect(carry == 0 && malleated[63] & 0xe0 == 0)
        #expect(LibsignalRule.verify(publicKey: publicKey, message: message, signature: malleated))
        #expect(!XEdDSA.verify(malleated, for: message, publicKey: publicKey))
        var maxS = signature
        for index in 32..<64 { maxS[index] = 0xff }
        #expect(!XEdDSA.verify(maxS, for: message, publicKey: publicKey))

        // Public keys that are not canonical curve points.
        let badKeys = [
            "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  // u = −1: no Edwards image
            "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  // u = p (non-canonical 0)
            "0200000000000000000000000000000000000000000000000000000000000000",  // u = 2: on the twist (Python)
            "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",  // top bit set
        ]
        for hex in badKeys {
            #expect(!XEdDSA.verify(signature, for: message, publicKey: [UInt8](hex: hex)!), "\(hex)")
        }
        // Our key with its (unused) top bit set: the same u for X25519, but not canonical here.
        var highBit = publicKey
        highBit[31] |= 0x80
        #expect(!XEdDSA.verify(signature, for: message, publicKey: highBit))
        // u = 9 + p, a non-canonical encoding of the base point's u: rejected (u ≥ p), as the
        // specification says.
        let basePointU = [UInt8](hex: "f6ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")!
        #expect(!XEdDSA.verify(signature, for: message, publicKey: basePointU))
        // A degenerate key (u = 0, order 2) and an all-zero signature.
        #expect(!XEdDSA.verify([UInt8](repeating: 0, count: 64), for: message, publicKey: [UInt8](repeating: 0, count: 32)))
    }

    @Test("errors and descriptions carry no key material")
    func errorDescription() {
        #expect(XEdDSAError.invalidRandomByteCount.description.contains("64 bytes"))
    }

    // MARK: Timing (opt-in)

    @Test("timing: sign and verify per operation (set INVISO_BENCH=1, run with -c release)",
          .enabled(if: ProcessInfo.processInfo.environment["INVISO_BENCH"] != nil))
    func timing() throws {
        var generator = SeededGenerator(seed: 15)
        let key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: generator.bytes(32))
        let publicKey = Array(key.publicKey.rawRepresentation)
        let message = generator.bytes(33)
        let random = generator.bytes(64)
        var signature = try XEdDSA.sign(message, with: key, random: random)   // warms the base table
        let iterations = 2_000
        let clock = ContinuousClock()
        let signTime = try clock.measure {
            for _ in 0..<iterations { signature = try XEdDSA.sign(message, with: key, random: random) }
        }
        var ok = true
        let verifyTime = clock.measure {
            for _ in 0..<iterations { ok = XEdDSA.verify(signature, for: message, publicKey: publicKey) && ok }
        }
        #expect(ok)
        func microseconds(_ duration: Duration) -> Double {
            let (seconds, attoseconds) = duration.components
            return (Double(seconds) * 1e6 + Double(attoseconds) / 1e12) / Double(iterations)
        }
        print(String(format: "XEdDSA: sign %.1f µs/op, verify %.1f µs/op (%d iterations)",
                     microseconds(signTime), microseconds(verifyTime), iterations))
    }
}
