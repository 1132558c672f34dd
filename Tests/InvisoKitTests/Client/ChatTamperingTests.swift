import Crypto
import Foundation
@testable import InvisoKit
import InvisoSignal
import Synchronization
import Testing

/// Two real clients talking through ``TamperingProxy`` in front of the real server: a
/// server that swaps keys in transit. v2 refuses (fails closed, nothing delivered); v1
/// pairs but reports the substitution as differing safety numbers.
@Suite("ChatClient through a server that tampers with keys in transit", .timeLimit(.minutes(6)))
struct ChatTamperingTests {
    /// The attacker's own X25519 key pair (a fixed scalar, so runs are reproducible).
    static let attackerKey = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: 0x5A, count: 32))
    static var attackerPublicKey: [UInt8] { Array(attackerKey.publicKey.rawRepresentation) }

    /// Runs `body` with a real server and a proxy in front of it running `transform`;
    /// closes the proxy after.
    static func withProxy(
        transform: @escaping @Sendable (ProxiedMessage) -> [UInt8]?,
        _ body: (KitTestServer, TamperingProxy) async throws -> Void
    ) async throws {
        try await KitTestServer.with(limits: ChatFixture.fastLimits) { server in
            let proxy = try await TamperingProxy(upstreamPort: server.port, transform: transform)
            do {
                try await body(server, proxy)
            } catch {
                await proxy.close()
                throw error
            }
            #expect(proxy.failures.isEmpty, "\(proxy.failures)")
            await proxy.close()
        }
    }

    static func client(_ server: KitTestServer, _ proxy: TamperingProxy, seed: UInt64) -> (ChatClient, ChatEventLog) {
        ChatFixture.client(server, seed: seed) { $0.server = proxy.endpoint }
    }

    /// A v1 safety number as the spec defines it (docs/protocol.md, `V1SecureChannel`):
    /// libsignal's displayable fingerprint v2, 5,200 iterations, ids by role.
    static func v1SafetyNumber(local: [UInt8], remote: [UInt8], localIsCreator: Bool) throws -> String {
        let creator = Array("inviso v1 creator".utf8), joiner = Array("inviso v1 joiner".utf8)
        return try Fingerprint(
            version: 2, iterations: 5_200,
            localStableID: localIsCreator ? creator : joiner, localIdentity: IdentityKey(ECPublicKey(rawRepresentation: local)),
            remoteStableID: localIsCreator ? joiner : creator, remoteIdentity: IdentityKey(ECPublicKey(rawRepresentation: remote))
        ).displayable.digits
    }

    // MARK: v1

    @Test func v1KeySubstitutionShowsDifferentSafetyNumbers() async throws {
        let originals = Mutex<[[UInt8]]>([])
        let attacker = Self.attackerPublicKey
        let transform: @Sendable (ProxiedMessage) -> [UInt8]? = { message in
            guard message.kind == .text,
                var object = try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any],
                object["type"] as? String == "key_exchange",
                let original = (object["publicKey"] as? String).flatMap({ Data(base64Encoded: $0) })
            else { return nil }
            originals.withLock { $0.append(Array(original)) }
            object["publicKey"] = Data(attacker).base64EncodedString()
            return try? Array(JSONSerialization.data(withJSONObject: object))
        }
        try await Self.withProxy(transform: transform) { server, proxy in
            let (alice, aliceLog) = Self.client(server, proxy, seed: 1)
            let (bob, bobLog) = Self.client(server, proxy, seed: 2)
            let invite = try await alice.invite()
            try await bob.join(invite.joinCode)
            let aliceSecurity = try await aliceLog.waitForSecurity()
            let bobSecurity = try await bobLog.waitForSecurity()
            #expect(proxy.webSocketConnections >= 2)
            // Both key exchanges went through the attacker.
            let keys = originals.withLock { $0 }
            #expect(keys.count == 2 && Set(keys).count == 2 && !keys.contains(attacker))
            #expect(aliceSecurity.version == .v1 && bobSecurity.version == .v1)
            #expect(!aliceSecurity.isVerified && !bobSecurity.isVerified)
            #expect(aliceLog.all.contains(.warning(.unverifiedV1)) && bobLog.all.contains(.warning(.unverifiedV1)))
            // The mismatch: each side's number covers its own key and the attacker's.
            #expect(aliceSecurity.safetyNumber != bobSecurity.safetyNumber)
            let aliceCandidates = try keys.map { try Self.v1SafetyNumber(local: $0, remote: attacker, localIsCreator: true) }
            let bobCandidates = try keys.map { try Self.v1SafetyNumber(local: $0, remote: attacker, localIsCreator: false) }
            let aliceOwn = try #require(aliceCandidates.firstIndex(of: aliceSecurity.safetyNumber), "\(aliceSecurity)")
            let bobOwn = try #require(bobCandidates.firstIndex(of: bobSecurity.safetyNumber), "\(bobSecurity)")
            #expect(aliceOwn != bobOwn)
            // What both would have seen without the attacker differs from either.
            let honest = try Self.v1SafetyNumber(local: keys[aliceOwn], remote: keys[bobOwn], localIsCreator: true)
            #expect(honest != aliceSecurity.safetyNumber && honest != bobSecurity.safetyNumber)
            await alice.leave()
            await bob.leave()
        }
    }

    // MARK: v2

    /// Expects both sides to have failed closed: one `pairingFailed` error, closed with
    /// `.pairingFailed`, never secured, no message, and the queued texts nowhere.
    static func expectFailedClosed(_ logs: [ChatEventLog], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        for log in logs {
            // A `.secured` ends the wait too (and fails below) instead of running into the timeout.
            try await log.wait("the failure", sourceLocation: sourceLocation) { $0.finished || $0.security != nil }
            #expect(log.errors == [.pairingFailed], "\(log.all)", sourceLocation: sourceLocation)
            #expect(log.closeReason == .pairingFailed, sourceLocation: sourceLocation)
            #expect(log.security == nil, sourceLocation: sourceLocation)
            #expect(log.messages.isEmpty, "\(log.messages)", sourceLocation: sourceLocation)
        }
    }

    /// Pairs alice and bob with a v2 invite through `proxy`, each queuing one message
    /// before the pairing; waits until both failed closed.
    static func pairExpectingRefusal(_ server: KitTestServer, _ proxy: TamperingProxy) async throws {
        let (alice, aliceLog) = client(server, proxy, seed: 1)
        let (bob, bobLog) = client(server, proxy, seed: 2)
        let invite = try await alice.invite()
        try await bob.join(invite.text)
        _ = try await bob.send(text: "queued by bob before the pairing")
        try await expectFailedClosed([aliceLog, bobLog])
        #expect(proxy.webSocketConnections >= 2)
        #expect(await alice.state == .closed)
        #expect(await bob.state == .closed)
        await #expect(throws: ChatError.closed) { try await alice.send(text: "after the failure") }
    }

    @Test func v2SubstitutedCPaceMessageFailsClosed() async throws {
        let substituted = Mutex(0)
        let fake = Array(
            try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: 0x33, count: 32))
                .publicKey.rawRepresentation)
        let transform: @Sendable (ProxiedMessage) -> [UInt8]? = { message in
            let bytes = message.payload
            // 0x01 ‖ lv_cat(Y, AD): 0x20 ‖ Y ‖ 0x00 (docs/protocol.md, "Frames").
            guard message.kind == .binary, bytes.count == 35, bytes[0] == 0x01, bytes[1] == 0x20, bytes[34] == 0x00
            else { return nil }
            substituted.withLock { $0 += 1 }
            return [0x01, 0x20] + fake + [0x00]
        }
        try await Self.withProxy(transform: transform) { server, proxy in
            try await Self.pairExpectingRefusal(server, proxy)
            #expect(substituted.withLock { $0 } == 2)
        }
    }

    /// One bit flipped in the first, second or third Noise handshake message.
    @Test(arguments: [0, 1, 2])
    func v2TamperedNoiseHandshakeFailsClosed(messageIndex: Int) async throws {
        let seen = Mutex(0)
        let transform: @Sendable (ProxiedMessage) -> [UInt8]? = { message in
            guard message.kind == .binary, message.payload.count > 1, message.payload[0] == 0x02 else { return nil }
            let index = seen.withLock { count in
                defer { count += 1 }
                return count
            }
            guard index == messageIndex else { return nil }
            var bytes = message.payload
            bytes[bytes.count / 2] ^= 0x01
            return bytes
        }
        try await Self.withProxy(transform: transform) { server, proxy in
            try await Self.pairExpectingRefusal(server, proxy)
            #expect(seen.withLock { $0 } > messageIndex)
        }
    }
}

/// The proxy's WebSocket parsing and re-framing, byte by byte.
@Suite("ServerStreamRewriter")
struct ServerStreamRewriterTests {
    static let head = Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n".utf8)

    /// Uppercases every text message; leaves binary ones alone.
    static func rewriter() -> ServerStreamRewriter {
        ServerStreamRewriter { message in
            message.kind == .text ? Array(String(decoding: message.payload, as: UTF8.self).uppercased().utf8) : nil
        }
    }

    @Test func plainResponsesPassThroughUntouched() throws {
        var rewriter = Self.rewriter()
        let response = Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n".utf8)
        #expect(try rewriter.feed(response.prefix(10)) == [])
        // A body that looks like a text frame stays as it is.
        #expect(try rewriter.feed(response.dropFirst(10) + [0x81, 0x03, 0x61, 0x62, 0x63]) == response + [0x81, 0x03, 0x61, 0x62, 0x63])
        #expect(!rewriter.isWebSocket)
        #expect(try rewriter.feed([0x81, 0x01, 0x61]) == [0x81, 0x01, 0x61])
    }

    @Test func rewritesTextAcrossLengthEncodingsAndSplitReads() throws {
        var rewriter = Self.rewriter()
        let short = Array("abc".utf8)
        let medium = [UInt8](repeating: 0x61, count: 300)
        let long = [UInt8](repeating: 0x62, count: 70_000)
        // 7-bit, 16-bit and 64-bit lengths, written by hand.
        var input = Self.head
        input += [0x81, 0x03] + short
        input += [0x81, 126, 0x01, 0x2C] + medium
        input += [0x81, 127, 0, 0, 0, 0, 0, 0x01, 0x11, 0x70] + long
        var output: [UInt8] = []
        var offset = 0
        for size in [1, 7, 13, 1000, 50_000] + [Int](repeating: 4096, count: 10) where offset < input.count {
            let end = min(input.count, offset + size)
            output += try rewriter.feed(input[offset..<end])
            offset = end
        }
        output += try rewriter.feed(input[offset...])
        var expected = Self.head
        expected += [0x81, 0x03] + Array("ABC".utf8)
        expected += [0x81, 126, 0x01, 0x2C] + [UInt8](repeating: 0x41, count: 300)
        expected += [0x81, 127, 0, 0, 0, 0, 0, 0x01, 0x11, 0x70] + [UInt8](repeating: 0x42, count: 70_000)
        #expect(output.count == expected.count && output == expected)
        #expect(rewriter.isWebSocket)
    }

    @Test func fragmentedMessageIsReassembledAroundControlFrames() throws {
        var rewriter = Self.rewriter()
        let ping: [UInt8] = [0x89, 0x02, 0x01, 0x02]
        let close: [UInt8] = [0x88, 0x02, 0x03, 0xE8]
        var input = Self.head
        input += [0x01, 0x02] + Array("he".utf8)  // text, not final
        input += ping
        input += [0x00, 0x02] + Array("ll".utf8)  // continuation
        input += [0x80, 0x01] + Array("o".utf8)  // final continuation
        input += [0x82, 0x02, 0x01, 0x02]  // binary, unchanged
        input += close
        let output = try rewriter.feed(input)
        #expect(output == Self.head + ping + [0x81, 0x05] + Array("HELLO".utf8) + [0x82, 0x02, 0x01, 0x02] + close)
    }

    @Test func maskedFramesAreUnmaskedBeforeTheTransform() throws {
        var rewriter = Self.rewriter()
        let key: [UInt8] = [0x11, 0x22, 0x33, 0x44]
        let masked = Array("hi!".utf8).enumerated().map { $0.element ^ key[$0.offset % 4] }
        #expect(try rewriter.feed(Self.head + [0x81, 0x83] + key + masked) == Self.head + [0x81, 0x03] + Array("HI!".utf8))
    }

    @Test func unsupportedOrOversizedStreamsAreRefused() throws {
        var compressed = Self.rewriter()
        #expect(throws: ServerStreamRewriter.Failure.unsupported("RSV bits set")) {
            try compressed.feed(Self.head + [0xC1, 0x01, 0x00])
        }
        var stray = Self.rewriter()
        #expect(throws: ServerStreamRewriter.Failure.unsupported("continuation without a message")) {
            try stray.feed(Self.head + [0x80, 0x00])
        }
        var big = ServerStreamRewriter(maxMessageBytes: 1_000) { _ in nil }
        #expect(throws: ServerStreamRewriter.Failure.messageTooLarge) {
            try big.feed(Self.head + [0x82, 126, 0x03, 0xE9])
        }
        var endless = ServerStreamRewriter(maxHeaderBytes: 64) { _ in nil }
        #expect(throws: ServerStreamRewriter.Failure.headerTooLarge) {
            try endless.feed([UInt8](repeating: 0x41, count: 65))
        }
    }
}
