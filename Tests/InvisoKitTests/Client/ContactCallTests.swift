import Foundation
import InvisoCrypto
import InvisoNoise
import Testing

@testable import InvisoKit

/// Calls to a saved contact: the derived rendezvous, and the pinned identity enforced by
/// the session machine against the real server.
@Suite("Contact calls", .timeLimit(.minutes(4)))
struct ContactCallTests {
    static func key(_ byte: UInt8) -> SecretBytes { SecretBytes(Array(repeating: byte, count: 32)) }

    static func publicKey(_ secret: SecretBytes) throws -> [UInt8] {
        try secret.withUnsafeBytes { raw throws(NoiseError) in try NoiseKeyPair(rawPrivateKey: raw) }.publicKey
    }

    @Test func bothSidesDeriveTheSameSecretAndInviteAndWindowsDiffer() throws {
        let alice = try Self.publicKey(Self.key(1))
        let bob = try Self.publicKey(Self.key(2))
        let nonceA = [UInt8](repeating: 0xA0, count: 32)
        let nonceB = [UInt8](repeating: 0xB0, count: 32)
        let ours = ContactCall.secret(ourIdentity: alice, ourNonce: nonceA, theirIdentity: bob, theirNonce: nonceB)
        let theirs = ContactCall.secret(ourIdentity: bob, ourNonce: nonceB, theirIdentity: alice, theirNonce: nonceA)
        #expect(ours == theirs)
        // Another nonce: another secret.
        #expect(ours != ContactCall.secret(ourIdentity: alice, ourNonce: nonceB, theirIdentity: bob, theirNonce: nonceB))
        let window = ContactCall.window(at: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(window == 6_000_000)
        #expect(ContactCall.window(at: Date(timeIntervalSince1970: 1_800_000_299)) == window)
        #expect(ContactCall.window(at: Date(timeIntervalSince1970: 1_800_000_300)) == window + 1)
        let invite = ContactCall.invite(secret: ours, window: window)
        #expect(invite.text == ContactCall.invite(secret: theirs, window: window).text)
        #expect(invite.joinCode.count == 6 && invite.joinCode.allSatisfy(\.isNumber))
        // Codes and words of other windows and other secrets share nothing visible.
        let codes = Set((0..<50).map { ContactCall.invite(secret: ours, window: window + Int64($0)).joinCode })
        #expect(codes.count >= 49)
        #expect(ContactCall.invite(secret: Self.key(9), window: window).text != invite.text)
        // Slot 0 is the window's invite; each later slot (a second call in the window) is another.
        #expect(ContactCall.invite(secret: ours, window: window, slot: 0).text == invite.text)
        let slots = Set((0..<ContactCall.slotsPerWindow).map { ContactCall.invite(secret: ours, window: window, slot: $0).text })
        #expect(slots.count == ContactCall.slotsPerWindow)
    }

    @Test func theContactsOwnKeyPairsAndAnyOtherFails() async throws {
        try await KitTestServer.with(limits: ChatFixture.fastLimits) { server in
            let aliceKey = Self.key(1)
            let bobKey = Self.key(2)
            let mallorysKey = Self.key(3)
            let secret = Self.key(7)
            let invite = ContactCall.invite(secret: secret, window: 42)
            // Alice and Bob, each with the other's key pinned: verified v2.
            let alice = ChatFixture.client(server, seed: 1) { $0.contactCall = (aliceKey, try! Self.publicKey(bobKey)) }
            let bob = ChatFixture.client(server, seed: 2) { $0.contactCall = (bobKey, try! Self.publicKey(aliceKey)) }
            _ = try await alice.0.invite(fixed: invite)
            // The code is Alice's now: a second room under it is refused (the caller joins).
            let late = ChatFixture.client(server, seed: 5) { $0.contactCall = (bobKey, try! Self.publicKey(aliceKey)) }
            await #expect(throws: ChatError.alreadyUsed) { _ = try await late.0.invite(fixed: invite) }
            try await bob.0.join(invite.text)
            let security = try await bob.1.waitForSecurity()
            #expect(security.version == .v2 && security.isVerified)
            try await ChatFixture.exchange(alice, bob, count: 3)

            // Mallory has the secret (so the words) but not Bob's key: Alice refuses her.
            let second = ContactCall.invite(secret: secret, window: 43)
            let alice2 = ChatFixture.client(server, seed: 3) { $0.contactCall = (aliceKey, try! Self.publicKey(bobKey)) }
            let mallory = ChatFixture.client(server, seed: 4) { $0.contactCall = (mallorysKey, try! Self.publicKey(aliceKey)) }
            _ = try await alice2.0.invite(fixed: second)
            try await mallory.0.join(second.text)
            try await alice2.1.wait("alice refuses mallory") { $0.closeReason == .pairingFailed }
            #expect(alice2.1.errors.contains { $0.description.contains("not the saved contact") })
            #expect(alice2.1.security == nil)
        }
    }
}
