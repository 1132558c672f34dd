import InvisoKit
import InvisoTesting
import Testing

@Suite("RelayTransport over the real server", .timeLimit(.minutes(6)))
struct RelayTransportTests {
    @Test func framesFlowAndSendFailsWhileDownOrClosed() async throws {
        try await KitTestServer.with { server in
            let room = try await SignalingClientTests.pair(server, code: "424242")
            let (alice, aliceLog, _) = SignalingClientTests.makeClient(server, seed: 1)
            let (bob, bobLog, _) = SignalingClientTests.makeClient(server, seed: 2)
            let relay = RelayTransport(signaling: alice, pacing: .init(messagesPerSecond: 1_000, burst: 5))
            #expect(relay.path == .relay)
            // Before the socket is up: not connected (the caller keeps the frame).
            if !(await alice.isConnected) {
                await #expect(throws: TransportError.notConnected) { try await relay.send([1]) }
            }
            try await alice.join(roomID: room, deviceID: "device-alice")
            try await bob.join(roomID: room, deviceID: "device-bob")
            try await aliceLog.next(where: SignalingClientTests.isReady)
            try await bobLog.next(where: SignalingClientTests.isReady)
            // More frames than the burst: the pacing makes them wait, none is dropped.
            let frames = (0..<20).map { [UInt8(1), UInt8($0)] }
            for frame in frames { try await relay.send(frame) }
            #expect(try await SignalingClientTests.binaries(bobLog, count: 20) == frames)
            // Binary events handed to deliver(_:) come out of incoming in order.
            relay.deliver([7])
            relay.deliver([8])
            var iterator = relay.incoming.makeAsyncIterator()
            #expect(await iterator.next() == [7])
            #expect(await iterator.next() == [8])
            await #expect(throws: TransportError.frameTooLarge) { try await relay.send([UInt8](repeating: 0, count: 70_000)) }
            // A batch goes out in writes of at most the burst, in order, all of it.
            let batch = (0..<23).map { [UInt8(2), UInt8($0)] }
            #expect(await relay.send(contentsOf: batch) == FrameBatchResult(sent: 23))
            #expect(try await SignalingClientTests.binaries(bobLog, count: 23) == batch)
            // A frame above the limit fails its write; the frames written before it count.
            let oversize = [[UInt8(3)], [UInt8](repeating: 0, count: 70_000), [UInt8(4)]]
            let result = await relay.send(contentsOf: oversize)
            #expect(result.failure == .frameTooLarge && result.sent < 2)
            await relay.close()
            #expect(await iterator.next() == nil)
            await #expect(throws: TransportError.closed) { try await relay.send([1]) }
            #expect(await relay.send(contentsOf: [[1], [2]]) == FrameBatchResult(sent: 0, failure: .closed))
            await alice.close()
            await bob.close()
        }
    }
}
