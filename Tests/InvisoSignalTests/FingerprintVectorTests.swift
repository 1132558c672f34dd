import Foundation
import InvisoSignal
import InvisoTesting
import Testing

@Suite("Fingerprint")
struct FingerprintVectorTests {
    // MARK: libsignal vectors

    /// Runs every entry of shared/vectors/signal/fingerprint.json (libsignal
    /// rust/protocol/src/fingerprint.rs at b056faa6dd02961cff24064c54c089c52e1a0753).
    @Test("libsignal fingerprint.json: safety numbers, scannable encodings and compare rules", .enabled(if: SharedVectors.present("signal/fingerprint.json"), SharedVectors.skipComment))
    func libsignalVectors() throws {
        guard let url = SharedVectors.url("signal/fingerprint.json") else {
            if SharedVectors.isCI { Issue.record("shared/vectors/signal/fingerprint.json is missing under CI=true") }
            print(SharedVectors.skipMessage("libsignal fingerprint vectors"))
            return
        }
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let vectors = try #require(root["vectors"] as? [[String: Any]])
        var ran = 0
        for vector in vectors {
            let name = try #require(vector["name"] as? String)
            let inputs = try #require(vector["inputs"] as? [String: Any], "\(name): inputs")
            let expected = try #require(vector["expected"] as? [String: Any], "\(name): expected")
            switch name {
            case "fingerprint_test_v1", "fingerprint_test_v2":
                try runSafetyNumber(
                    name: name, inputs: inputs, expected: expected,
                    derived: try #require(vector["derived_not_in_source"] as? [String: Any]))
            case "fingerprint_encodings":
                try runEncoding(inputs: inputs, expected: expected)
            case "fingerprint_compare_rules":
                try runCompareRules(inputs: inputs, expected: expected)
            default:
                Issue.record("unknown fingerprint vector \(name)")
                continue
            }
            ran += 1
        }
        print("libsignal fingerprint vectors: \(ran) ran")
        #expect(ran == 4, "expected 4 libsignal fingerprint vectors, ran \(ran)")
    }

    private func bytes(_ dictionary: [String: Any], _ key: String) throws -> [UInt8] {
        try #require((dictionary[key] as? String).flatMap { [UInt8](hex: $0) }, "missing or bad hex: \(key)")
    }

    private func runSafetyNumber(
        name: String, inputs: [String: Any], expected: [String: Any], derived: [String: Any]
    ) throws {
        let version = UInt32(try #require(inputs["version"] as? Int))
        let iterations = try #require(inputs["iterations"] as? Int)
        let aliceKey = try IdentityKey(serialized: bytes(inputs, "alice_identity_key"))
        let bobKey = try IdentityKey(serialized: bytes(inputs, "bob_identity_key"))
        let aliceID = try bytes(inputs, "alice_stable_id_hex")
        let bobID = try bytes(inputs, "bob_stable_id_hex")
        #expect(aliceID == Array(try #require(inputs["alice_stable_id"] as? String).utf8))
        #expect(bobID == Array(try #require(inputs["bob_stable_id"] as? String).utf8))

        // Derived intermediates: each side's hash and its 30 digits.
        let aliceHash = Fingerprint.hash(iterations: iterations, stableID: aliceID, identity: aliceKey)
        let bobHash = Fingerprint.hash(iterations: iterations, stableID: bobID, identity: bobKey)
        #expect(aliceHash.count == 64)
        #expect(Array(aliceHash.prefix(32)) == (try bytes(derived, "alice_hash_first32")), "\(name)")
        #expect(Array(bobHash.prefix(32)) == (try bytes(derived, "bob_hash_first32")), "\(name)")
        let aliceDigits = try #require(derived["alice_display_30"] as? String)
        let bobDigits = try #require(derived["bob_display_30"] as? String)

        let alice = try Fingerprint(
            version: version, iterations: iterations, localStableID: aliceID, localIdentity: aliceKey,
            remoteStableID: bobID, remoteIdentity: bobKey)
        let bob = try Fingerprint(
            version: version, iterations: iterations, localStableID: bobID, localIdentity: bobKey,
            remoteStableID: aliceID, remoteIdentity: aliceKey)
        let display = try #require(expected["displayable"] as? String)
        #expect(alice.displayable.digits == display, "\(name)")
        #expect(bob.displayable.digits == display, "\(name)")
        #expect(display == aliceDigits + bobDigits)
        #expect(alice.displayable.description == display)
        #expect(alice.scannable.serialized == (try bytes(expected, "alice_scannable")), "\(name)")
        #expect(bob.scannable.serialized == (try bytes(expected, "bob_scannable")), "\(name)")
        #expect(alice.scannable.version == version)

        // Each side accepts the other's QR code and not its own.
        #expect(try alice.scannable.compare(with: bob.scannable.serialized))
        #expect(try bob.scannable.compare(with: alice.scannable.serialized))
        #expect(try !alice.scannable.compare(with: alice.scannable.serialized))
    }

    private func runEncoding(inputs: [String: Any], expected: [String: Any]) throws {
        let scannable = try ScannableFingerprint(
            version: UInt32(try #require(inputs["version"] as? Int)),
            localFingerprint: bytes(inputs, "local_fingerprint"),
            remoteFingerprint: bytes(inputs, "remote_fingerprint"))
        #expect(scannable.serialized == (try bytes(expected, "serialized")))
    }

    private func runCompareRules(inputs: [String: Any], expected: [String: Any]) throws {
        var generator = SeededGenerator(seed: 0xF1)
        let version = UInt32(try #require(inputs["version"] as? Int))
        let iterations = try #require(inputs["iterations"] as? Int)
        let aliceID = Array(try #require(inputs["alice_stable_id"] as? String).utf8)
        let bobID = Array(try #require(inputs["bob_stable_id"] as? String).utf8)
        let otherID = Array(try #require(inputs["mismatching_stable_id"] as? String).utf8)
        let aliceKey = IdentityKeyPair.generate(using: &generator).identityKey
        let bobKey = IdentityKeyPair.generate(using: &generator).identityKey
        let mitmKey = IdentityKeyPair.generate(using: &generator).identityKey
        func make(
            _ version: UInt32, _ localID: [UInt8], _ local: IdentityKey, _ remoteID: [UInt8], _ remote: IdentityKey
        ) throws -> Fingerprint {
            try Fingerprint(
                version: version, iterations: iterations, localStableID: localID, localIdentity: local,
                remoteStableID: remoteID, remoteIdentity: remote)
        }
        func flag(_ key: String) throws -> Bool { try #require(expected[key] as? Bool, "\(key)") }

        let alice = try make(version, aliceID, aliceKey, bobID, bobKey)
        let bob = try make(version, bobID, bobKey, aliceID, aliceKey)
        #expect(alice.displayable == bob.displayable)
        #expect(try alice.scannable.compare(with: bob.scannable.serialized) == flag("own_scannable_vs_peer_serialized"))
        #expect(try bob.scannable.compare(with: alice.scannable.serialized) == flag("own_scannable_vs_peer_serialized"))
        #expect(
            try alice.scannable.compare(with: alice.scannable.serialized) == flag("own_scannable_vs_own_serialized"))
        #expect(alice.displayable.digits.count == (try #require(expected["display_string_length"] as? Int)))
        #expect(alice.displayable.digits.allSatisfy(\.isASCII) && alice.displayable.digits.allSatisfy(\.isNumber))

        // Bob sees a man in the middle's key instead of Alice's.
        let bobMITM = try make(version, bobID, bobKey, aliceID, mitmKey)
        #expect(try (alice.displayable == bobMITM.displayable) == flag("mitm_key_display_equal"))
        #expect(try alice.scannable.compare(with: bobMITM.scannable.serialized) == flag("mitm_key_scannable_match"))
        #expect(try bobMITM.scannable.compare(with: alice.scannable.serialized) == flag("mitm_key_scannable_match"))

        // Bob has a different stable id for Alice.
        let bobOtherID = try make(version, bobID, bobKey, otherID, aliceKey)
        #expect(try (alice.displayable == bobOtherID.displayable) == flag("different_stable_id_display_equal"))
        #expect(
            try alice.scannable.compare(with: bobOtherID.scannable.serialized)
                == flag("different_stable_id_scannable_match"))

        // Versions 1 and 2: the same number, different QR codes, and comparing them is an error.
        let otherVersion: UInt32 = version == 1 ? 2 : 1
        let aliceOther = try make(otherVersion, aliceID, aliceKey, bobID, bobKey)
        let bobOther = try make(otherVersion, bobID, bobKey, aliceID, aliceKey)
        #expect(try (alice.displayable == aliceOther.displayable) == flag("v1_vs_v2_display_equal"))
        #expect(
            try (alice.scannable.serialized == aliceOther.scannable.serialized)
                == flag("v1_vs_v2_scannable_serialization_equal"))
        #expect((expected["compare_with_other_version"] as? String)?.contains("VersionMismatch") == true)
        #expect(throws: SignalError.fingerprintVersionMismatch) {
            try alice.scannable.compare(with: bobOther.scannable.serialized)
        }
    }

    // MARK: Rules beyond the vectors

    private func keys(_ seed: UInt64) -> (IdentityKey, IdentityKey) {
        var generator = SeededGenerator(seed: seed)
        return (
            IdentityKeyPair.generate(using: &generator).identityKey,
            IdentityKeyPair.generate(using: &generator).identityKey
        )
    }

    @Test("iterations must be 2 … 1,000,000; versions 1 and 2")
    func iterationAndVersionLimits() throws {
        let (alice, bob) = keys(1)
        func make(version: UInt32 = 2, iterations: Int) throws(SignalError) -> Fingerprint {
            try Fingerprint(
                version: version, iterations: iterations, localStableID: [1], localIdentity: alice, remoteStableID: [2],
                remoteIdentity: bob)
        }
        for bad in [Int.min, -1, 0, 1, 1_000_001, Int.max] {
            #expect(throws: SignalError.invalidIterations, "\(bad)") { try make(iterations: bad) }
        }
        #expect(throws: Never.self) { try make(iterations: 2) }
        for bad: UInt32 in [0, 3, .max] {
            #expect(throws: SignalError.invalidArgument, "version \(bad)") { try make(version: bad, iterations: 2) }
        }
        #expect(throws: SignalError.invalidArgument) {
            try ScannableFingerprint(
                version: 2, localFingerprint: [UInt8](repeating: 1, count: 31),
                remoteFingerprint: [UInt8](repeating: 1, count: 32))
        }
    }

    @Test("compare: malformed input is a parsing error, absent version a mismatch, odd-length contents no match")
    func compareRules() throws {
        let (alice, bob) = keys(2)
        let mine = try Fingerprint(
            version: 2, iterations: 2, localStableID: [1], localIdentity: alice, remoteStableID: [2],
            remoteIdentity: bob
        ).scannable
        let theirs = try Fingerprint(
            version: 2, iterations: 2, localStableID: [2], localIdentity: bob, remoteStableID: [1],
            remoteIdentity: alice
        ).scannable
        #expect(try mine.compare(with: theirs.serialized))

        // Not protobuf.
        #expect(throws: SignalError.fingerprintParsingError) { try mine.compare(with: [0xff]) }
        #expect(throws: SignalError.fingerprintParsingError) { try mine.compare(with: theirs.serialized.dropLast()) }
        // No version field: version 0.
        #expect(throws: SignalError.fingerprintVersionMismatch) {
            try mine.compare(with: Array(theirs.serialized.dropFirst(2)))
        }
        #expect(throws: SignalError.fingerprintVersionMismatch) { try mine.compare(with: []) }
        // Version only, or a fingerprint without content.
        #expect(throws: SignalError.fingerprintParsingError) { try mine.compare(with: [0x08, 0x02]) }
        #expect(throws: SignalError.fingerprintParsingError) {
            try mine.compare(with: [0x08, 0x02, 0x12, 0x00, 0x1a, 0x00])
        }
        // Contents of another length compare unequal.
        var short: [UInt8] = [0x08, 0x02, 0x12, 0x21, 0x0a, 0x1f] + theirs.localFingerprint.prefix(31)
        short += [0x1a, 0x22, 0x0a, 0x20] + theirs.remoteFingerprint
        #expect(try !mine.compare(with: short))
        // Every single-bit change in a content is a mismatch.
        var flips = 0
        // Layout: 08 02 | 12 22 0a 20 local(32) | 1a 22 0a 20 remote(32).
        #expect(theirs.serialized.count == 74)
        for index in Array(6..<38) + Array(42..<74) {
            var tampered = theirs.serialized
            tampered[index] ^= 0x01
            #expect(try !mine.compare(with: tampered), "byte \(index)")
            flips += 1
        }
        #expect(flips == 64)
    }
}
