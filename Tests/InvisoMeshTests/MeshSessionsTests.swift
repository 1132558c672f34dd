import Crypto
import InvisoMesh
import InvisoNoise
import InvisoTesting
import Testing

/// Two nodes' sessions, driven by hand: every handshake message is delivered explicitly.
private struct Pair {
    let alice = MeshIdentity(noiseKey: Self.key(1), signingKey: Curve25519.Signing.PrivateKey())
    let bob = MeshIdentity(noiseKey: Self.key(2), signingKey: Curve25519.Signing.PrivateKey())
    var a: MeshSessions
    var b: MeshSessions

    init() {
        a = MeshSessions(identity: alice.noiseKey)
        b = MeshSessions(identity: bob.noiseKey)
    }

    static func key(_ seed: UInt64) -> NoiseKeyPair {
        var generator = SeededGenerator(seed: seed)
        return try! NoiseKeyPair(rawPrivateKey: generator.bytes(32))
    }

    /// The handshake bytes in a list of actions.
    static func handshakes(_ actions: [MeshSessions.Action]) -> [[UInt8]] {
        actions.compactMap { if case .sendHandshake(_, let bytes) = $0 { bytes } else { nil } }
    }

    /// Runs a full handshake started by Alice.
    mutating func connect() throws {
        let m1 = try #require(Self.handshakes(a.initiate(with: bob.peerID, now: 0)).first)
        let m2 = try #require(Self.handshakes(b.receiveHandshake(m1, from: alice.peerID, now: 0)).first)
        let m3 = try #require(Self.handshakes(a.receiveHandshake(m2, from: bob.peerID, now: 0)).first)
        let done = try b.receiveHandshake(m3, from: alice.peerID, now: 0)
        #expect(done == [.established(alice.peerID, noiseKey: alice.noiseKey.publicKey)])
    }
}

@Suite("Mesh Noise sessions")
struct MeshSessionsTests {
    @Test("peer ID and fingerprint are SHA-256 of the Noise static key")
    func identity() {
        let identity = MeshIdentity.generate()
        let hash = Array(SHA256.hash(data: identity.noiseKey.publicKey))
        #expect(identity.fingerprint == hash)
        #expect(identity.peerID.bytes == Array(hash.prefix(8)))
        #expect(!identity.description.contains(String(describing: identity.noiseKey.publicKey)))
    }

    @Test("XX handshake, then nonce-prefixed transport both ways, sizes as BitChat sends them")
    func handshakeAndTransport() throws {
        var pair = Pair()
        let m1 = try #require(Pair.handshakes(pair.a.initiate(with: pair.bob.peerID, now: 0)).first)
        #expect(m1.count == 32)
        let m2 = try #require(Pair.handshakes(pair.b.receiveHandshake(m1, from: pair.alice.peerID, now: 0)).first)
        #expect(m2.count == 96)
        let m2Actions = try pair.a.receiveHandshake(m2, from: pair.bob.peerID, now: 0)
        let m3 = try #require(Pair.handshakes(m2Actions).first)
        #expect(m3.count == 64)
        #expect(m2Actions.contains(.established(pair.bob.peerID, noiseKey: pair.bob.noiseKey.publicKey)))
        _ = try pair.b.receiveHandshake(m3, from: pair.alice.peerID, now: 0)
        #expect(pair.a.handshakeHash(with: pair.bob.peerID) == pair.b.handshakeHash(with: pair.alice.peerID))

        let sealed = try pair.a.seal(Array("hello".utf8), for: pair.bob.peerID)
        #expect(sealed.prefix(4) == [0, 0, 0, 0])
        #expect(sealed.count == 4 + 5 + 16)
        #expect(try pair.b.open(sealed, from: pair.alice.peerID) == Array("hello".utf8))
        let back = try pair.b.seal(Array("hi".utf8), for: pair.alice.peerID)
        #expect(try pair.a.open(back, from: pair.bob.peerID) == Array("hi".utf8))
    }

    @Test("replays, tampering and reordering: replays and forgeries rejected, late messages inside the window accepted")
    func replayAndTamper() throws {
        var pair = Pair()
        try pair.connect()
        let first = try pair.a.seal([1], for: pair.bob.peerID)
        let second = try pair.a.seal([2], for: pair.bob.peerID)
        #expect(try pair.b.open(second, from: pair.alice.peerID) == [2])
        #expect(try pair.b.open(first, from: pair.alice.peerID) == [1])
        #expect(throws: MeshSessionError.replayed) { try pair.b.open(first, from: pair.alice.peerID) }
        let third = try pair.a.seal([3, 3, 3], for: pair.bob.peerID)
        for index in third.indices {
            var tampered = third
            tampered[index] ^= 0x01
            #expect(throws: MeshSessionError.self) { try pair.b.open(tampered, from: pair.alice.peerID) }
        }
        #expect(try pair.b.open(third, from: pair.alice.peerID) == [3, 3, 3])
        #expect(throws: MeshSessionError.noSession) { try pair.b.open(third, from: PeerID(rawValue: 7)) }
        #expect(throws: MeshSessionError.noSession) { try pair.b.seal([1], for: PeerID(rawValue: 7)) }
    }

    @Test("a static key that does not hash to the claimed peer ID is refused")
    func identityBinding() throws {
        var pair = Pair()
        let impostor = PeerID(rawValue: 0x0102_0304_0506_0708)
        // Alice believes she talks to `impostor`, but Bob's key answers.
        let m1 = try #require(Pair.handshakes(pair.a.initiate(with: impostor, now: 0)).first)
        let m2 = try #require(Pair.handshakes(pair.b.receiveHandshake(m1, from: pair.alice.peerID, now: 0)).first)
        #expect(throws: MeshSessionError.identityMismatch) { try pair.a.receiveHandshake(m2, from: impostor, now: 0) }
        #expect(!pair.a.isEstablished(with: impostor))
        // And Bob refuses Alice's third message when it arrives under another sender ID.
        var other = Pair()
        let n1 = try #require(Pair.handshakes(other.a.initiate(with: other.bob.peerID, now: 0)).first)
        let n2 = try #require(Pair.handshakes(other.b.receiveHandshake(n1, from: impostor, now: 0)).first)
        let n3 = try #require(Pair.handshakes(other.a.receiveHandshake(n2, from: other.bob.peerID, now: 0)).first)
        #expect(throws: MeshSessionError.identityMismatch) { try other.b.receiveHandshake(n3, from: impostor, now: 0) }
        #expect(!other.b.isEstablished(with: impostor))
    }

    @Test("both sides start at once: exactly one handshake completes")
    func simultaneousStart() throws {
        var pair = Pair()
        let fromA = try #require(Pair.handshakes(pair.a.initiate(with: pair.bob.peerID, now: 0)).first)
        let fromB = try #require(Pair.handshakes(pair.b.initiate(with: pair.alice.peerID, now: 0)).first)
        let answerByB = Pair.handshakes(try pair.b.receiveHandshake(fromA, from: pair.alice.peerID, now: 0))
        let answerByA = Pair.handshakes(try pair.a.receiveHandshake(fromB, from: pair.bob.peerID, now: 0))
        #expect(answerByA.count + answerByB.count == 1)
        // Finish whichever handshake survived.
        if let m2 = answerByB.first {
            let m3 = try #require(Pair.handshakes(pair.a.receiveHandshake(m2, from: pair.bob.peerID, now: 0)).first)
            _ = try pair.b.receiveHandshake(m3, from: pair.alice.peerID, now: 0)
        } else if let m2 = answerByA.first {
            let m3 = try #require(Pair.handshakes(pair.b.receiveHandshake(m2, from: pair.alice.peerID, now: 0)).first)
            _ = try pair.a.receiveHandshake(m3, from: pair.bob.peerID, now: 0)
        }
        #expect(pair.a.isEstablished(with: pair.bob.peerID) && pair.b.isEstablished(with: pair.alice.peerID))
        let sealed = try pair.a.seal([9], for: pair.bob.peerID)
        #expect(try pair.b.open(sealed, from: pair.alice.peerID) == [9])
    }

    @Test("a forged first message does not disturb an established session; a real rehandshake replaces it")
    func rehandshake() throws {
        var pair = Pair()
        try pair.connect()
        _ = try pair.b.receiveHandshake([UInt8](repeating: 9, count: 32), from: pair.alice.peerID, now: 0)
        #expect(throws: MeshSessionError.handshakeFailed) {
            try pair.b.receiveHandshake([UInt8](repeating: 7, count: 64), from: pair.alice.peerID, now: 0)
        }
        let old = try pair.a.seal([1], for: pair.bob.peerID)
        #expect(try pair.b.open(old, from: pair.alice.peerID) == [1])

        // Alice restarts (new process, same identity) and handshakes again.
        var restarted = MeshSessions(identity: pair.alice.noiseKey)
        let m1 = try #require(Pair.handshakes(restarted.initiate(with: pair.bob.peerID, now: 5)).first)
        let m2 = try #require(Pair.handshakes(pair.b.receiveHandshake(m1, from: pair.alice.peerID, now: 5)).first)
        let m3 = try #require(Pair.handshakes(restarted.receiveHandshake(m2, from: pair.bob.peerID, now: 5)).first)
        _ = try pair.b.receiveHandshake(m3, from: pair.alice.peerID, now: 5)
        let fresh = try restarted.seal([2], for: pair.bob.peerID)
        #expect(try pair.b.open(fresh, from: pair.alice.peerID) == [2])
    }

    @Test("unfinished handshakes expire; garbage is refused without a state change")
    func timeoutsAndGarbage() throws {
        var pair = Pair()
        _ = pair.a.initiate(with: pair.bob.peerID, now: 1_000)
        #expect(pair.a.tick(now: 1_000 + MeshSessions.handshakeTimeout - 1).isEmpty)
        #expect(pair.a.tick(now: 1_000 + MeshSessions.handshakeTimeout) == [pair.bob.peerID])
        #expect(!pair.a.isHandshaking(with: pair.bob.peerID))
        for length in [0, 1, 31, 33, 95, 96, 200] {
            #expect(throws: MeshSessionError.handshakeFailed) {
                try pair.b.receiveHandshake([UInt8](repeating: 0, count: length), from: pair.alice.peerID, now: 0)
            }
        }
        // An all-zero ephemeral key is a low-order point: refused.
        #expect(throws: MeshSessionError.handshakeFailed) {
            try pair.b.receiveHandshake([UInt8](repeating: 0, count: 32), from: pair.alice.peerID, now: 0)
        }
        #expect(!pair.b.isHandshaking(with: pair.alice.peerID))
    }
}
