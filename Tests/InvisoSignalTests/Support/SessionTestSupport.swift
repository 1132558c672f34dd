import Foundation
import InvisoCrypto
import InvisoTesting
@testable import InvisoSignal
import Testing

/// One side of a test conversation: a store, an address, and a way to publish a bundle.
struct TestParty {
    var store: InMemorySignalProtocolStore
    let address: ProtocolAddress
    let deviceID: UInt32

    init(name: String, registrationID: UInt32, using generator: inout SeededGenerator) {
        let identity = IdentityKeyPair.generate(using: &generator)
        self.store = InMemorySignalProtocolStore(identity: identity, registrationID: registrationID)
        self.deviceID = 1
        self.address = ProtocolAddress(name: name, deviceID: 1)
    }

    /// Generates fresh pre-keys with the given ids and returns the matching bundle.
    mutating func publishBundle(
        kyber: Bool, oneTime: Bool = true, kyberLastResort: Bool = false, id: UInt32 = 1,
        using generator: inout SeededGenerator
    ) throws -> PreKeyBundle {
        let identity = store.identity
        let signed = SignedPreKeyRecord.generate(id: id, timestamp: 1_700_000_000_000, identity: identity, using: &generator)
        try store.storeSignedPreKey(signed)
        var preKey: (id: UInt32, publicKey: ECPublicKey)?
        if oneTime {
            let record = PreKeyRecord(id: id + 100, keyPair: .generate(using: &generator))
            try store.storePreKey(record)
            preKey = (record.id, record.keyPair.publicKey)
        }
        var kyberPreKey: (id: UInt32, publicKey: KyberPublicKey, signature: [UInt8])?
        if kyber {
            let record = try KyberPreKeyRecord.generate(
                id: id + 200, timestamp: 1_700_000_000_000, isLastResort: kyberLastResort, identity: identity,
                using: &generator)
            try store.storeKyberPreKey(record)
            kyberPreKey = (record.id, record.keyPair.publicKey, record.signature)
        }
        return PreKeyBundle(
            registrationID: store.registrationID, deviceID: deviceID, preKey: preKey, signedPreKeyID: signed.id,
            signedPreKey: signed.keyPair.publicKey, signedPreKeySignature: signed.signature,
            identityKey: identity.identityKey, kyberPreKey: kyberPreKey)
    }

    mutating func encrypt(_ text: String, to peer: ProtocolAddress) throws -> CiphertextMessage {
        try SessionCipher.encrypt(Array(text.utf8), for: peer, store: &store)
    }

    mutating func decrypt(_ message: CiphertextMessage, from peer: ProtocolAddress, using generator: inout SeededGenerator)
        throws -> String
    {
        let plaintext = try SessionCipher.decrypt(
            type: message.type, body: message.serialized, from: peer, store: &store, using: &generator)
        return String(decoding: plaintext, as: UTF8.self)
    }

    /// The serialized session with `peer` (to compare states before and after a failure).
    func sessionSnapshot(with peer: ProtocolAddress) -> SecretBytes? {
        store.sessions[peer]?.serialize()
    }
}

/// Alice and Bob with a session set up from Bob's bundle and one round trip done, so both
/// sides have sent and received.
struct Conversation {
    var alice: TestParty
    var bob: TestParty
    var generator: SeededGenerator

    init(seed: UInt64, kyber: Bool, oneTime: Bool = true) throws {
        var generator = SeededGenerator(seed: seed)
        alice = TestParty(name: "alice", registrationID: 1111, using: &generator)
        bob = TestParty(name: "bob", registrationID: 2222, using: &generator)
        let bundle = try bob.publishBundle(kyber: kyber, oneTime: oneTime, using: &generator)
        try SessionBuilder.process(bundle, for: bob.address, store: &alice.store, using: &generator)
        self.generator = generator
    }

    mutating func aliceToBob(_ text: String) throws -> String {
        let message = try alice.encrypt(text, to: bob.address)
        return try bob.decrypt(message, from: alice.address, using: &generator)
    }

    mutating func bobToAlice(_ text: String) throws -> String {
        let message = try bob.encrypt(text, to: alice.address)
        return try alice.decrypt(message, from: bob.address, using: &generator)
    }
}
