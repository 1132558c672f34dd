import InvisoCrypto
import InvisoNearby
import Testing

@Suite struct SafetyNumberTests {
    @Test func bothSidesReadTheSameSixtyDigits() {
        let alice = NearbyIdentity().publicKey
        let bob = NearbyIdentity().publicKey
        let mallory = NearbyIdentity().publicKey
        let seenByAlice = NearbySafetyNumber(local: alice, remote: bob)
        let seenByBob = NearbySafetyNumber(local: bob, remote: alice)
        #expect(seenByAlice.digits == seenByBob.digits)
        #expect(seenByAlice.digits.count == 60 && seenByAlice.digits.allSatisfy(\.isNumber))
        #expect(seenByAlice.grouped.split(separator: " ").map(\.count) == Array(repeating: 5, count: 12))
        // A different identity on either side changes the number.
        #expect(NearbySafetyNumber(local: alice, remote: mallory).digits != seenByAlice.digits)
        #expect(NearbySafetyNumber(local: mallory, remote: bob).digits != seenByAlice.digits)
        // The scannable forms differ (local/remote swapped) but both are valid QR payloads.
        #expect(!seenByAlice.scannable.isEmpty && seenByAlice.scannable != seenByBob.scannable)
    }

    /// A known answer from an independent implementation of libsignal's algorithm:
    /// `scripts/vectors/nearby_safety_number.py` (Python, `cryptography` for the Ed25519
    /// public keys of the seeds 01…01 and 02…02).
    @Test func knownAnswer() throws {
        let a = try NearbyIdentity(rawPrivateKey: SecretBytes([UInt8](repeating: 1, count: 32))).publicKey
        let b = try NearbyIdentity(rawPrivateKey: SecretBytes([UInt8](repeating: 2, count: 32))).publicKey
        let expected = "496072353657619584962056882002707070785064792311392713307519"
        #expect(NearbySafetyNumber(local: a, remote: b).digits == expected)
        #expect(NearbySafetyNumber(local: b, remote: a).digits == expected)
    }
}
