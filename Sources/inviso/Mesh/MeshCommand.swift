import ArgumentParser
import Foundation
import InvisoMesh
import InvisoMeshUDP
import InvisoTime
import NIOCore
import NIOPosix

/// `inviso mesh`: a BitChat-compatible mesh node over UDP.
struct MeshCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mesh",
        abstract: "Join a mesh over UDP: public messages to everyone, private ones end to end.",
        discussion: """
            Each line on standard input is a public message. Commands: /msg NICK text sends a \
            private message (NICK may also be a peer ID or fingerprint in hex), /peers lists \
            the peers with their fingerprints, /quit leaves (so does end of input). Neighbours \
            are the --peer addresses plus every address that sends us a packet; with \
            --discover, also every node that broadcasts on the LAN's discovery port \
            (--discovery-port, to --broadcast; 127.255.255.255 finds nodes on this machine). \
            The identity and the private messages not yet delivered are kept, sealed, in the \
            data directory.

            With --json every output line is a JSON object: {"event":"started",…}, \
            {"event":"peer","nick":…,"fingerprint":…,"id":…}, \
            {"event":"public","from":…,"text":…,"hops":…,"fingerprint":…}, \
            {"event":"private","from":…,"text":…,"fingerprint":…,"id":…}, \
            {"event":"sent","id":…,"to":…}, {"event":"delivered","id":…,"to":…}, \
            {"event":"undeliverable","id":…,"to":…}, {"event":"refused","reason":…}, \
            {"event":"error","error":…}. "hops" is null for a message that arrived through \
            gossip sync.
            """
    )

    @Option(help: "The nickname to announce.")
    var nick: String

    @Option(help: "UDP port to listen on (0 picks a free one).")
    var port: Int

    @Option(help: "Address to bind (0.0.0.0 for every interface).")
    var host = "0.0.0.0"

    @Option(name: .customLong("peer"), help: "A neighbour's HOST:PORT (repeatable).")
    var peers: [String] = []

    @Flag(help: "Find neighbours on the LAN by UDP broadcast (and be found).")
    var discover = false

    @Option(help: "The discovery port, the same for every node (with --discover).")
    var discoveryPort = 7_946

    @Option(help: "Where discovery beacons go (with --discover).")
    var broadcast = "255.255.255.255"

    @Flag(help: "Print JSON lines instead of text.")
    var json = false

    @Option(help: "Data directory (default: the per-user Inviso data directory).")
    var data: String?

    func validate() throws {
        guard !nick.isEmpty, nick.utf8.count <= 64, !nick.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw ValidationError("--nick must be 1–64 bytes without control characters")
        }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        guard (1...65_535).contains(discoveryPort) else {
            throw ValidationError("--discovery-port must be between 1 and 65535")
        }
        guard (try? SocketAddress(ipAddress: broadcast, port: discoveryPort)) != nil else {
            throw ValidationError("--broadcast must be an IP address")
        }
    }

    func run() async throws {
        ignoreBrokenPipes()
        let output = MeshOutput(json: json)
        let session: MeshCLISession
        do {
            session = try await MeshCLISession.start(self, output: output)
        } catch {
            output.error(error)
            throw ExitCode.failure
        }
        await session.run()
    }
}

/// One running `inviso mesh`: the node, its state file, and the input loop.
private struct MeshCLISession {
    let node: MeshNode
    let state: MeshStateFile
    let output: MeshOutput

    static func start(_ command: MeshCommand, output: MeshOutput) async throws -> MeshCLISession {
        let state = try MeshStateFile(directory: command.data ?? DataDirectory.defaultPath)
        let identity = try state.loadOrCreateIdentity()
        let outbox = try state.loadOutbox()
        var neighbours: [SocketAddress] = []
        for text in command.peers {
            let (host, port) = try parseHostPort(text)
            do {
                neighbours.append(try SocketAddress.makeAddressResolvingHost(host, port: port))
            } catch {
                throw CLIError("cannot resolve \(text)")
            }
        }
        let socket: UDPMeshSocket
        do {
            socket = try await UDPMeshSocket.bind(
                host: command.host, port: command.port, group: MultiThreadedEventLoopGroup.singleton)
        } catch {
            throw CLIError("cannot listen on UDP \(command.host):\(command.port): \(error)")
        }
        let core = MeshNodeCore(
            identity: identity, nickname: command.nick, seed: UInt64.random(in: 0...UInt64.max), outbox: outbox)
        var discovery: MeshDiscovery?
        if command.discover {
            let beacon = MeshDiscovery.Beacon(port: UInt16(socket.localPort ?? command.port), peerID: identity.peerID)
            do {
                discovery = try await MeshDiscovery(
                    beacon: beacon, port: command.discoveryPort, broadcast: command.broadcast,
                    group: MultiThreadedEventLoopGroup.singleton)
            } catch {
                await socket.close()
                throw CLIError("cannot use discovery port \(command.discoveryPort): \(error)")
            }
        }
        let node = MeshNode(
            core: core, socket: socket, neighbours: neighbours, discovery: discovery, clock: SystemClock())
        output.started(identity: identity, nick: command.nick, port: socket.localPort ?? command.port, pending: outbox.count)
        await node.start()
        return MeshCLISession(node: node, state: state, output: output)
    }

    func run() async {
        let events = Task {
            for await event in node.events {
                output.event(event)
                switch event {
                case .delivered, .undeliverable: await saveOutbox()
                default: break
                }
            }
        }
        for await line in StandardInputLines.stream() {
            guard await handle(String(decoding: line, as: UTF8.self)) else { break }
        }
        await saveOutbox()
        // Let relays and acknowledgements already scheduled go out before leaving.
        try? await Task.sleep(for: .milliseconds(500))
        await node.stop()
        await events.value
    }

    /// Handles one input line; returns false to leave.
    private func handle(_ line: String) async -> Bool {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return true }
        do {
            if trimmed == "/quit" { return false }
            if trimmed == "/peers" {
                output.peers(await node.knownPeers, present: Set(await node.presentPeers.map(\.id)))
            } else if trimmed.hasPrefix("/msg ") {
                let rest = trimmed.dropFirst(5).drop { $0 == " " }
                guard let space = rest.firstIndex(of: " ") else { throw CLIError("usage: /msg NICK text") }
                let target = String(rest[..<space])
                let text = String(rest[space...].drop { $0 == " " })
                let peer = try resolve(target, among: await node.knownPeers)
                let id = try await node.sendPrivate(text, to: peer)
                output.sent(id: id, to: target)
                await saveOutbox()
            } else if trimmed.hasPrefix("/") {
                throw CLIError("unknown command \(trimmed.split(separator: " ")[0]) (try /msg, /peers, /quit)")
            } else {
                try await node.sendPublic(line)
            }
        } catch {
            output.error(error)
        }
        return true
    }

    /// A peer by nickname, peer ID (16 hex digits) or fingerprint (64 hex digits).
    private func resolve(_ target: String, among peers: [MeshNodeCore.Peer]) throws -> PeerID {
        let lowered = target.lowercased()
        if let peer = peers.first(where: { $0.fingerprint == lowered }) { return peer.id }
        if lowered.count == 16, let id = PeerID(hex: lowered) { return id }
        let named = peers.filter { $0.nickname == target }
        switch named.count {
        case 1: return named[0].id
        case 0: throw CLIError("no peer called \(target) (see /peers)")
        default: throw CLIError("\(named.count) peers are called \(target): use a fingerprint from /peers")
        }
    }

    private func saveOutbox() async {
        do {
            try state.saveOutbox(await node.pendingPrivateMessages)
        } catch {
            output.error(error)
        }
    }
}

/// Standard input as lines, read on a thread of its own so that a blocking read never
/// holds a thread of Swift's cooperative pool.
enum StandardInputLines {
    static func stream() -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        let thread = Thread {
            var reader = LineReader()
            while let line = try? reader.next() { continuation.yield(line) }
            continuation.finish()
        }
        thread.start()
        return stream
    }
}
