import Crypto
import Foundation
import InvisoCrypto
import InvisoTesting
import Testing

@Suite("Kyber1024 (round 3)")
struct Kyber1024Tests {
    // MARK: Round-3 KAT

    /// `shared/vectors/signal/kyber1024-round3-kat.json`: entries 0–9 of the NIST round-3
    /// `PQCkemKAT_3168.rsp` (see the README beside it).
    struct KATFile: Decodable {
        struct Entry: Decodable {
            struct Derived: Decodable {
                let mlkem1024DecapsSharedSecret: String
                enum CodingKeys: String, CodingKey {
                    case mlkem1024DecapsSharedSecret = "mlkem1024_decaps_shared_secret"
                }
            }
            let name: String
            let count: Int
            let seed: String
            let pk: String
            let sk: String
            let ct: String
            let ss: String
            let derived: Derived
            enum CodingKeys: String, CodingKey {
                case name, count, seed, pk, sk, ct, ss
                case derived = "derived_not_in_source"
            }
        }
        let vectors: [Entry]
    }

    static let katEntryCount = 10

    /// Checks, for every KAT entry, what swift-crypto lets us reproduce:
    /// (a) the public key imports and re-exports byte for byte;
    /// (b) the round-3 secret-key layout indcpa_sk ‖ pk ‖ SHA3-256(pk) ‖ z, with swift-crypto's SHA3-256;
    /// (c) the round-3 shared secret from the ML-KEM-1024 decapsulation secret and the ciphertext;
    /// (d) encapsulating to the KAT key gives a 1,568-byte ciphertext and a 32-byte secret.
    /// Key generation from the DRBG seed, the KAT ciphertext and decapsulation with the KAT
    /// secret key cannot be reproduced: swift-crypto imports ML-KEM seeds only, and
    /// round-3 and ML-KEM seeds are not interchangeable.
    @Test("round-3 KAT: public keys, secret-key layout, shared-secret derivation, encapsulation", .enabled(if: SharedVectors.present("signal/kyber1024-round3-kat.json"), SharedVectors.skipComment))
    func roundThreeKAT() throws {
        guard let url = SharedVectors.url("signal/kyber1024-round3-kat.json") else {
            if SharedVectors.isCI {
                Issue.record("shared/vectors/signal/kyber1024-round3-kat.json is missing under CI=true")
            }
            print(SharedVectors.skipMessage("Kyber1024 round-3 KAT"))
            return
        }
        let entries = try JSONDecoder().decode(KATFile.self, from: Data(contentsOf: url)).vectors
        var publicKeysRoundTripped = 0
        var secretKeyLayoutsChecked = 0
        var sharedSecretsDerived = 0
        var encapsulationsChecked = 0
        for entry in entries {
            func bytes(_ hex: String, _ field: String, count: Int) throws -> [UInt8] {
                let decoded = try #require([UInt8](hex: hex), "\(entry.name): \(field) is not hex")
                try #require(decoded.count == count, "\(entry.name): \(field) has \(decoded.count) bytes, not \(count)")
                return decoded
            }
            let pk = try bytes(entry.pk, "pk", count: Kyber1024.publicKeyByteCount)
            let sk = try bytes(entry.sk, "sk", count: 3168)
            let ct = try bytes(entry.ct, "ct", count: Kyber1024.ciphertextByteCount)
            let ss = try bytes(entry.ss, "ss", count: Kyber1024.sharedSecretByteCount)
            let mlkemSecret = try bytes(
                entry.derived.mlkem1024DecapsSharedSecret, "mlkem1024_decaps_shared_secret", count: 32)
            _ = try bytes(entry.seed, "seed", count: 48)

            // (a) pk import and re-export.
            let publicKey = try Kyber1024.PublicKey(rawRepresentation: pk)
            if publicKey.rawRepresentation == pk { publicKeysRoundTripped += 1 }
            #expect(publicKey.rawRepresentation == pk, "\(entry.name): pk re-export differs")

            // (b) sk = indcpa_sk (1536) ‖ pk (1568) ‖ SHA3-256(pk) (32) ‖ z (32).
            let embeddedPublicKey = Array(sk[1536..<3104])
            let embeddedHash = Array(sk[3104..<3136])
            let z = Array(sk[3136..<3168])
            let layoutHolds =
                embeddedPublicKey == pk && Array(Crypto.SHA3_256.hash(data: pk)) == embeddedHash && z.count == 32
            if layoutHolds { secretKeyLayoutsChecked += 1 }
            #expect(embeddedPublicKey == pk, "\(entry.name): sk does not embed pk")
            #expect(Array(Crypto.SHA3_256.hash(data: pk)) == embeddedHash, "\(entry.name): SHA3-256(pk) differs from sk")

            // (c) ss = SHAKE256(K_mlkem ‖ SHA3-256(ct))[0..<32].
            let derived = Kyber1024.roundThreeSharedSecret(mlkemSharedSecret: mlkemSecret, ciphertext: ct)
            if derived == SecretBytes(ss) { sharedSecretsDerived += 1 }
            #expect(derived == SecretBytes(ss), "\(entry.name): derived ss differs")
            var otherCiphertext = ct
            otherCiphertext[0] ^= 1
            #expect(
                Kyber1024.roundThreeSharedSecret(mlkemSharedSecret: mlkemSecret, ciphertext: otherCiphertext)
                    != SecretBytes(ss), "\(entry.name): the derivation ignores the ciphertext")

            // (d) encapsulation to the KAT key.
            let (secret, ciphertext) = try publicKey.encapsulate()
            if ciphertext.count == Kyber1024.ciphertextByteCount && secret.count == Kyber1024.sharedSecretByteCount {
                encapsulationsChecked += 1
            }
            #expect(ciphertext.count == Kyber1024.ciphertextByteCount)
            #expect(secret.count == Kyber1024.sharedSecretByteCount)
            #expect(ciphertext != ct, "\(entry.name): encapsulation repeated the KAT ciphertext")
        }
        print(
            "Kyber1024 round-3 KAT: \(entries.count) entries; reproduced: pk import/export \(publicKeysRoundTripped), "
                + "sk layout + SHA3-256(pk) \(secretKeyLayoutsChecked), ss from ML-KEM secret \(sharedSecretsDerived), "
                + "encapsulation to pk \(encapsulationsChecked); not reproducible with seed-only import: "
                + "keygen from DRBG seed, KAT ct, decapsulation with KAT sk")
        #expect(
            entries.count == Self.katEntryCount, "expected \(Self.katEntryCount) KAT entries, found \(entries.count)")
        for (check, count) in [
            ("pk import/export", publicKeysRoundTripped), ("sk layout", secretKeyLayoutsChecked),
            ("ss derivation", sharedSecretsDerived), ("encapsulation", encapsulationsChecked),
        ] {
            #expect(count == Self.katEntryCount, "\(check): \(count) of \(Self.katEntryCount) KAT entries passed")
        }
    }

    // MARK: Round trips

    @Test("encapsulate then decapsulate agrees, over seeded and fresh keys", arguments: [1, 2, 3, 4])
    func roundTrip(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let keys = [
            try Kyber1024.PrivateKey(seedRepresentation: random.bytes(Kyber1024.seedByteCount)),
            try Kyber1024.PrivateKey(),
        ]
        for key in keys {
            let publicKey = try Kyber1024.PublicKey(rawRepresentation: key.publicKey.rawRepresentation)
            #expect(publicKey == key.publicKey)
            var ciphertexts: Set<[UInt8]> = []
            for _ in 0..<3 {
                let (sent, ciphertext) = try publicKey.encapsulate()
                #expect(ciphertext.count == Kyber1024.ciphertextByteCount)
                #expect(sent.count == Kyber1024.sharedSecretByteCount)
                #expect(try key.decapsulate(ciphertext) == sent)
                ciphertexts.insert(ciphertext)
            }
            #expect(ciphertexts.count == 3, "encapsulation repeated a ciphertext")
        }
    }

    @Test("a seed restores the same key pair")
    func seedRoundTrip() throws {
        var random = SeededGenerator(seed: 42)
        let seeds = [random.bytes(Kyber1024.seedByteCount), random.bytes(Kyber1024.seedByteCount)]
        let fresh = try Kyber1024.PrivateKey()
        for key in try [fresh] + seeds.map({ try Kyber1024.PrivateKey(seedRepresentation: $0) }) {
            let seed = key.seedRepresentation
            #expect(seed.count == Kyber1024.seedByteCount)
            let restored = try seed.withUnsafeBytes { try Kyber1024.PrivateKey(seedRepresentation: $0) }
            #expect(restored.publicKey == key.publicKey)
            #expect(restored.publicKey.rawRepresentation == key.publicKey.rawRepresentation)
            #expect(restored.seedRepresentation == seed)
            let (secret, ciphertext) = try key.publicKey.encapsulate()
            #expect(try restored.decapsulate(ciphertext) == secret)
        }
        // The seed is the whole key: the same seed gives the same key, another seed another key.
        let again = try Kyber1024.PrivateKey(seedRepresentation: seeds[0])
        #expect(again.seedRepresentation == SecretBytes(seeds[0]))
        #expect(try Kyber1024.PrivateKey(seedRepresentation: seeds[0]).publicKey == again.publicKey)
        #expect(try Kyber1024.PrivateKey(seedRepresentation: seeds[1]).publicKey != again.publicKey)
        #expect(Set([again.publicKey, again.publicKey, fresh.publicKey]).count == 2)
    }

    // MARK: Rejection

    @Test("wrong-length public keys are rejected", arguments: [0, 32, 1567, 1569, 3136])
    func wrongLengthPublicKey(count: Int) throws {
        let valid = try Kyber1024.PrivateKey().publicKey.rawRepresentation
        let candidate = Array((valid + valid).prefix(count))
        #expect(throws: Kyber1024Error.invalidPublicKey) { try Kyber1024.PublicKey(rawRepresentation: candidate) }
    }

    @Test("libsignal's 0x08 type byte is not part of the raw key")
    func typeBytePrefixRejected() throws {
        let valid = try Kyber1024.PrivateKey().publicKey.rawRepresentation
        #expect(throws: Kyber1024Error.invalidPublicKey) { try Kyber1024.PublicKey(rawRepresentation: [0x08] + valid) }
    }

    @Test("a public key with unreduced coefficients is rejected")
    func unreducedPublicKey() throws {
        // 0xFF bytes encode 12-bit coefficients of 4095 ≥ q = 3329.
        let invalid = [UInt8](repeating: 0xff, count: Kyber1024.publicKeyByteCount)
        #expect(throws: Kyber1024Error.invalidPublicKey) { try Kyber1024.PublicKey(rawRepresentation: invalid) }
        var almost = try Kyber1024.PrivateKey().publicKey.rawRepresentation
        almost[0] = 0xff
        almost[1] |= 0x0f  // first coefficient 4095
        #expect(throws: Kyber1024Error.invalidPublicKey) { try Kyber1024.PublicKey(rawRepresentation: almost) }
    }

    @Test("wrong-length ciphertexts are rejected", arguments: [0, 1, 1567, 1569, 3136])
    func wrongLengthCiphertext(count: Int) throws {
        let key = try Kyber1024.PrivateKey()
        let (_, ciphertext) = try key.publicKey.encapsulate()
        let candidate = Array((ciphertext + ciphertext).prefix(count))
        #expect(throws: Kyber1024Error.invalidCiphertext) { try key.decapsulate(candidate) }
        #expect(throws: Kyber1024Error.invalidCiphertext) { try key.decapsulate([0x08] + ciphertext) }
    }

    @Test("wrong-length seeds are rejected", arguments: [0, 32, 63, 65, 3168])
    func wrongLengthSeed(count: Int) {
        #expect(throws: Kyber1024Error.invalidPrivateKey) {
            try Kyber1024.PrivateKey(seedRepresentation: [UInt8](repeating: 7, count: count))
        }
    }

    // MARK: Implicit rejection

    /// Flipping one bit anywhere in the ciphertext never throws and always gives a different
    /// secret. Each result is also checked against the documented deviation: ML-KEM's
    /// rejection secret SHAKE256(z ‖ c)[0..<32] passed through the round-3 derivation, which
    /// differs from round 3's own SHAKE256(z ‖ SHA3-256(c))[0..<32].
    @Test("a tampered ciphertext gives a different secret, never an error")
    func tamperedCiphertext() throws {
        var random = SeededGenerator(seed: 7)
        let seed = random.bytes(Kyber1024.seedByteCount)
        let z = Array(seed[32..<64])
        let key = try Kyber1024.PrivateKey(seedRepresentation: seed)
        let (secret, ciphertext) = try key.publicKey.encapsulate()
        var tampered = 0
        for index in ciphertext.indices {
            var modified = ciphertext
            modified[index] ^= UInt8(1) << (index % 8)
            let result = try key.decapsulate(modified)
            #expect(result != secret, "flipping byte \(index) kept the secret")
            if index % 97 == 0 {
                let mlkemRejection = Keccak.SHAKE256.hash(z + modified, outputByteCount: 32)
                #expect(
                    result == Kyber1024.roundThreeSharedSecret(mlkemSharedSecret: mlkemRejection, ciphertext: modified))
                let roundThreeRejection = Keccak.SHAKE256.hash(
                    z + Array(Crypto.SHA3_256.hash(data: modified)), outputByteCount: 32)
                #expect(result != SecretBytes(roundThreeRejection))
            }
            tampered += 1
        }
        #expect(tampered == Kyber1024.ciphertextByteCount)
        #expect(try key.decapsulate(ciphertext) == secret, "the genuine ciphertext still decapsulates")
    }

    @Test("a ciphertext for another key gives a different secret")
    func ciphertextForAnotherKey() throws {
        let alice = try Kyber1024.PrivateKey()
        let bob = try Kyber1024.PrivateKey()
        #expect(alice.publicKey != bob.publicKey)
        let (secret, ciphertext) = try bob.publicKey.encapsulate()
        #expect(try alice.decapsulate(ciphertext) != secret)
        #expect(try bob.decapsulate(ciphertext) == secret)
    }

    // MARK: Hygiene

    @Test("private keys and errors never print key material")
    func redaction() throws {
        let seed = [UInt8](repeating: 0xab, count: Kyber1024.seedByteCount)
        let key = try Kyber1024.PrivateKey(seedRepresentation: seed)
        #expect(key.description == "Kyber1024.PrivateKey(<redacted>)")
        #expect(String(reflecting: key) == key.description)
        #expect("\(key)" == key.description)
        var dumped = ""
        dump(key, to: &dumped)
        #expect(!dumped.contains("171") && !dumped.lowercased().contains("abab"))
        #expect(Mirror(reflecting: key).children.isEmpty)
        let errors: [Kyber1024Error] = [
            .invalidPublicKey, .invalidPrivateKey, .invalidCiphertext,
            .keyGenerationFailed, .encapsulationFailed, .decapsulationFailed,
        ]
        #expect(Set(errors).count == errors.count)
        #expect(Set(errors.map(\.description)).count == errors.count)
        #expect(errors.allSatisfy { $0.description.hasPrefix("Kyber1024Error: ") })
    }
}
