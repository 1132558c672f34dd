public import InvisoMesh
public import NIOCore
import NIOPosix

#if canImport(Darwin)
import Darwin
#endif

/// Finds neighbours on a LAN by UDP broadcast: every node binds a shared discovery port
/// (several processes on one machine may), broadcasts a small ``Beacon`` there every few
/// seconds, and reports the mesh address of every other node it hears.
///
/// A beacon only proposes a neighbour. Nothing is trusted because of it: packets are
/// signed, private messages are Noise sessions, and ``MeshNode`` keeps at most
/// ``MeshNode/maximumLinks`` neighbours, so a flood of forged beacons costs a bounded
/// number of links and no state beyond them.
public final class MeshDiscovery: Sendable {
    /// What a node broadcasts: the port its mesh socket listens on and its peer ID (so it
    /// ignores its own beacons).
    ///
    /// Wire format (15 bytes): `"IVMD"`, version 1, the mesh port (u16, big-endian), the
    /// 8-byte peer ID. Anything else is not a beacon.
    public struct Beacon: Hashable, Sendable {
        static let magic: [UInt8] = Array("IVMD".utf8)
        static let version: UInt8 = 1
        /// The encoded length.
        public static let byteCount = 15

        /// The port of the node's mesh socket.
        public var port: UInt16
        /// The node's peer ID.
        public var peerID: PeerID

        /// Creates a beacon.
        public init(port: UInt16, peerID: PeerID) {
            self.port = port
            self.peerID = peerID
        }

        /// Reads a beacon; `nil` for any other bytes (wrong length, magic or version, port 0).
        public init?(bytes: [UInt8]) {
            guard bytes.count == Self.byteCount, bytes.starts(with: Self.magic), bytes[4] == Self.version else { return nil }
            let port = UInt16(bytes[5]) << 8 | UInt16(bytes[6])
            guard port != 0, let peerID = PeerID(bytes: bytes[7...]) else { return nil }
            self.port = port
            self.peerID = peerID
        }

        /// The 15 bytes.
        public var bytes: [UInt8] {
            Self.magic + [Self.version, UInt8(port >> 8), UInt8(port & 0xFF)] + peerID.bytes
        }
    }

    private let socket: UDPMeshSocket
    private let beacon: Beacon
    private let broadcast: SocketAddress

    /// Binds the discovery port.
    /// - Parameters:
    ///   - beacon: what this node announces (its mesh port and peer ID).
    ///   - host: the address to bind; `0.0.0.0` hears every interface's broadcasts.
    ///   - port: the discovery port, the same for every node of the LAN.
    ///   - broadcast: where beacons go (`255.255.255.255`, a subnet's broadcast address,
    ///     or `127.255.255.255` for processes on one machine).
    ///   - group: the event loops to run on.
    /// - Throws: NIO's error when an address is invalid or the port cannot be bound.
    public init(
        beacon: Beacon, host: String = "0.0.0.0", port: Int, broadcast: String = "255.255.255.255",
        group: any EventLoopGroup
    ) async throws {
        var options: [(ChannelOptions.Types.SocketOption, SocketOptionValue)] = [
            (.socketOption(.so_reuseaddr), 1), (.socketOption(.so_broadcast), 1),
        ]
        #if canImport(Darwin)
        // BSD sockets share a port between processes only with SO_REUSEPORT.
        options.append((.socketOption(NIOBSDSocket.Option(rawValue: SO_REUSEPORT)), 1))
        #endif
        socket = try await UDPMeshSocket.bind(host: host, port: port, group: group, socketOptions: options)
        self.beacon = beacon
        self.broadcast = try SocketAddress(ipAddress: broadcast, port: port)
    }

    /// Broadcasts this node's beacon once.
    public func announce() {
        socket.send(beacon.bytes, to: broadcast)
    }

    /// The mesh addresses of the other nodes heard, as beacons arrive (repeats included:
    /// every beacon of a node reports it again). Finishes when ``close()`` is called.
    public var discovered: AsyncCompactMapSequence<AsyncStream<UDPMeshSocket.Datagram>, SocketAddress> {
        let own = beacon.peerID
        return socket.datagrams.compactMap { datagram in
            guard let heard = Beacon(bytes: datagram.bytes), heard.peerID != own,
                let host = datagram.sender.ipAddress
            else { return nil }
            return try? SocketAddress(ipAddress: host, port: Int(heard.port))
        }
    }

    /// Closes the discovery socket.
    public func close() async {
        await socket.close()
    }
}
