import InvisoMesh
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
