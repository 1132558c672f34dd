import InvisoMesh
import InvisoMeshUDP
import NIOCore
import NIOPosix
import Testing

@Suite("UDP mesh socket")
struct UDPMeshSocketTests {
    @Test("two sockets on 127.0.0.1 exchange datagrams and see each other's address")
    func exchange() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let a = try await UDPMeshSocket.bind(host: "127.0.0.1", port: 0, group: group)
        let b = try await UDPMeshSocket.bind(host: "127.0.0.1", port: 0, group: group)
        let bAddress = try SocketAddress(ipAddress: "127.0.0.1", port: try #require(b.localPort))
        a.send([1, 2, 3], to: bAddress)
        var iterator = b.datagrams.makeAsyncIterator()
        let received = try #require(await iterator.next())
        #expect(received.bytes == [1, 2, 3])
        #expect(received.sender.port == a.localPort)
        // Sending to a closed port does not close the sender.
        await b.close()
        a.send([4], to: bAddress)
        let c = try await UDPMeshSocket.bind(host: "127.0.0.1", port: 0, group: group)
        a.send([5], to: try SocketAddress(ipAddress: "127.0.0.1", port: try #require(c.localPort)))
        var cIterator = c.datagrams.makeAsyncIterator()
        #expect(await cIterator.next()?.bytes == [5])
        await a.close()
        await c.close()
    }
}

@Suite("LAN discovery")
struct MeshDiscoveryTests {
    @Test("a beacon is 15 bytes that decode back; other bytes are not a beacon")
    func beacon() throws {
        let beacon = MeshDiscovery.Beacon(port: 0xBEEF, peerID: PeerID(rawValue: 0x0102_0304_0506_0708))
        #expect(beacon.bytes == Array("IVMD".utf8) + [1, 0xBE, 0xEF, 1, 2, 3, 4, 5, 6, 7, 8])
        #expect(MeshDiscovery.Beacon(bytes: beacon.bytes) == beacon)
        var wrongVersion = beacon.bytes
        wrongVersion[4] = 2
        var portZero = beacon.bytes
        portZero[5] = 0
        portZero[6] = 0
        var wrongMagic = beacon.bytes
        wrongMagic[0] = 0
        for bytes in [[], Array(beacon.bytes.dropLast()), beacon.bytes + [0], wrongVersion, portZero, wrongMagic] {
            #expect(MeshDiscovery.Beacon(bytes: bytes) == nil)
        }
    }

    @Test("two nodes on one discovery port find each other's mesh address, never their own")
    func findEachOther() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let port = Int.random(in: 40_000...59_999)
        let alice = MeshDiscovery.Beacon(port: 7_001, peerID: PeerID(rawValue: 0xA))
        let bob = MeshDiscovery.Beacon(port: 7_002, peerID: PeerID(rawValue: 0xB))
        let a = try await MeshDiscovery(beacon: alice, port: port, broadcast: "127.255.255.255", group: group)
        let b = try await MeshDiscovery(beacon: bob, port: port, broadcast: "127.255.255.255", group: group)
        // Closing ends the streams: a lost test fails instead of hanging.
        let watchdog = Task {
            try await Task.sleep(for: .seconds(20))
            await a.close()
            await b.close()
        }
        a.announce()
        b.announce()
        var aHeard = a.discovered.makeAsyncIterator()
        var bHeard = b.discovered.makeAsyncIterator()
        #expect(try await aHeard.next() == SocketAddress(ipAddress: "127.0.0.1", port: 7_002))
        #expect(try await bHeard.next() == SocketAddress(ipAddress: "127.0.0.1", port: 7_001))
        watchdog.cancel()
        await a.close()
        await b.close()
    }
}
