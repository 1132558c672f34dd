import InvisoNoise
import Testing

@Suite("Explicit-nonce transport (BitChat layout)")
struct ExplicitNonceTransportTests {
    private func makePair() throws -> (ExplicitNonceTransport, ExplicitNonceTransport) {
        var pair = try HandshakePair("Noise_XX_25519_ChaChaPoly_SHA256")
        let (initiator, responder) = try pair.complete()
        return (ExplicitNonceTransport(initiator), ExplicitNonceTransport(responder))
    }

    @Test("messages carry a 4-byte big-endian nonce and the standard Noise AEAD output")
    func layout() throws {
        var pair = try HandshakePair("Noise_XX_25519_ChaChaPoly_SHA256")
        let (initiator, _) = try pair.complete()
        var explicit = ExplicitNonceTransport(initiator)
        var implicit = initiator
        for n in 0..<3 {
            let sealed = try explicit.seal([UInt8](repeating: UInt8(n), count: 10))
            #expect(Array(sealed.prefix(4)) == [0, 0, 0, UInt8(n)])
            #expect(Array(sealed.dropFirst(4)) == (try implicit.encrypt([UInt8](repeating: UInt8(n), count: 10))))
        }
    }

    @Test("out of order is accepted, replays and messages older than the window are rejected")
    func replayWindow() throws {
        var (sender, receiver) = try makePair()
        var sealed: [[UInt8]] = []
        for n in 0..<1100 { sealed.append(try sender.seal([UInt8(n & 0xff)])) }
        #expect(try receiver.open(sealed[5]) == [5])
        #expect(try receiver.open(sealed[2]) == [2])
        #expect(throws: NoiseError.replayedMessage) { try receiver.open(sealed[5]) }
        #expect(try receiver.open(sealed[1050]) == [UInt8(1050 & 0xff)])
        #expect(throws: NoiseError.replayedMessage) { try receiver.open(sealed[10]) }  // 1040 behind
        #expect(try receiver.open(sealed[1030]) == [UInt8(1030 & 0xff)])            // 20 behind, fresh
        #expect(throws: NoiseError.replayedMessage) { try receiver.open(sealed[1030]) }
    }

    @Test("a forged message does not consume its nonce")
    func forgeryDoesNotBurnNonce() throws {
        var (sender, receiver) = try makePair()
        let genuine = try sender.seal(Array("hi".utf8))
        var forged = genuine
        forged[forged.count - 1] ^= 1
        #expect(throws: NoiseError.authenticationFailed) { try receiver.open(forged) }
        #expect(try receiver.open(genuine) == Array("hi".utf8))
        #expect(throws: NoiseError.malformedMessage) { try receiver.open([0, 0, 0, 1]) }
    }

    @Test("the replay window rejects only what it must")
    func windowUnit() {
        var window = ReplayWindow(size: 64)
        do { let accepted = window.accept(100); #expect(accepted) }
        do { let accepted = window.accept(100); #expect(!accepted) }
        do { let accepted = window.accept(37); #expect(accepted) }       // 63 behind
        do { let accepted = window.accept(36); #expect(!accepted) }      // 64 behind: outside
        do { let accepted = window.accept(1000); #expect(accepted) }
        #expect(!window.check(936))
        #expect(window.check(937))
        do { let accepted = window.accept(UInt64.max - 1); #expect(accepted) }
        #expect(!window.check(0))
    }
}
