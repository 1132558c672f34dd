import Crypto
import InvisoMesh
import InvisoNoise
import InvisoTesting
import Testing

/// Several ``MeshNodeCore``s wired together in memory with a virtual clock: every frame
/// takes `latency` milliseconds, and each node is ticked at its own deadline. Nothing is
/// random except the Noise ephemeral keys, which do not change the flow.
private struct Network {
    struct Frame {
        var time: UInt64
        var sequence: Int
        var node: Int
        var link: LinkID
        var bytes: [UInt8]
    }

    var nodes: [MeshNodeCore?]
    let identities: [MeshIdentity]
    /// `wires[node][link]` = (other node, the link ID on the other side).
    var wires: [[LinkID: (node: Int, link: LinkID)]]
    var queue: [Frame] = []
    var sequence = 0
    var now: UInt64 = 1_700_000_000_000
    var events: [[MeshNodeCore.Event]]
    let latency: UInt64 = 5
    /// Frames to drop: return true to lose the frame.
    var lose: (Frame) -> Bool = { _ in false }

    static func identity(_ index: Int) -> MeshIdentity {
        var generator = SeededGenerator(seed: UInt64(100 + index))
        let noise = try! NoiseKeyPair(rawPrivateKey: generator.bytes(32))
        let signing = try! Curve25519.Signing.PrivateKey(rawRepresentation: generator.bytes(32))
        return MeshIdentity(noiseKey: noise, signingKey: signing)
    }

    /// `count` nodes, none started; `connect` them and `start` them.
    init(count: Int) {
        identities = (0..<count).map(Self.identity)
        nodes = Array(repeating: nil, count: count)
        wires = Array(repeating: [:], count: count)
        events = Array(repeating: [], count: count)
    }

    /// A line 0–1–2–…, every node started.
    static func line(_ count: Int, startingAll: Bool = true) -> Network {
        var network = Network(count: count)
        for index in 0..<(count - 1) { network.connect(index, index + 1) }
        if startingAll { for index in 0..<count { network.start(index) } }
        return network
    }

    mutating func connect(_ a: Int, _ b: Int) {
        let linkA = LinkID(UInt32(b)), linkB = LinkID(UInt32(a))
        wires[a][linkA] = (b, linkB)
        wires[b][linkB] = (a, linkA)
    }

    /// Starts (or restarts, losing all state but the identity) node `index`.
    mutating func start(_ index: Int, outbox: [PrivateOutbox.Entry] = []) {
        nodes[index] = MeshNodeCore(
            identity: identities[index], nickname: "n\(index)", seed: UInt64(index + 1), outbox: outbox)
        for link in wires[index].keys.sorted() {
            let (other, _) = wires[index][link]!
            guard nodes[other] != nil else { continue }
            apply(index, nodes[index]!.linkUp(link, now: now))
        }
        // The neighbours notice the new node's link too.
        for (link, wire) in wires[index] where nodes[wire.node] != nil {
            _ = link
            apply(wire.node, nodes[wire.node]!.linkUp(wire.link, now: now))
        }
    }

    /// Stops node `index`; its neighbours see the link go down.
    mutating func stop(_ index: Int) {
        nodes[index] = nil
        for (_, wire) in wires[index] where nodes[wire.node] != nil {
            apply(wire.node, nodes[wire.node]!.linkDown(wire.link, now: now))
        }
    }

    mutating func apply(_ index: Int, _ actions: [MeshNodeCore.Action]) {
        for action in actions {
            switch action {
            case .event(let event): events[index].append(event)
            case .send(let frame, let link):
                // Through the same encoding a UDP link uses.
                guard let wire = wires[index][link],
                    let datagrams = try? frame.datagrams(to: nodes[index]?.neighbour(on: link), timestamp: now)
                else { continue }
                for bytes in datagrams {
                    sequence += 1
                    let frame = Frame(time: now + latency, sequence: sequence, node: wire.node, link: wire.link, bytes: bytes)
                    if !lose(frame) { queue.append(frame) }
                }
            }
        }
    }

    /// Runs the network for `milliseconds`.
    mutating func run(_ milliseconds: UInt64) {
        let end = now + milliseconds
        while true {
            let nextFrame = queue.map(\.time).min()
            let nextTick = nodes.compactMap { $0?.nextDeadline }.min()
            guard let next = [nextFrame, nextTick].compactMap({ $0 }).min(), next <= end else { break }
            now = max(now, next)
            if let index = queue.indices.filter({ queue[$0].time <= now }).min(by: { queue[$0].sequence < queue[$1].sequence }) {
                let frame = queue.remove(at: index)
                if nodes[frame.node] != nil {
                    apply(frame.node, nodes[frame.node]!.receive(frame.bytes, on: frame.link, now: now))
                }
                continue
            }
            for index in nodes.indices where (nodes[index]?.nextDeadline ?? .max) <= now {
                apply(index, nodes[index]!.tick(now: now))
                if nodes[index]!.nextDeadline <= now {
                    Issue.record("node \(index) still has work due at \(now) after a tick")
                    return
                }
            }
        }
        now = end
    }

    mutating func sendPublic(_ index: Int, _ text: String) throws {
        apply(index, try nodes[index]!.sendPublic(text, now: now))
    }

    @discardableResult
    mutating func sendPrivate(_ index: Int, _ text: String, to peer: Int) throws -> String {
        let (id, actions) = try nodes[index]!.sendPrivate(text, to: identities[peer].peerID, now: now)
        apply(index, actions)
        return id
    }

    func publicTexts(_ index: Int) -> [String] {
        events[index].compactMap { if case .publicMessage(_, let text, _, _) = $0 { text } else { nil } }
    }

    func privateTexts(_ index: Int) -> [String] {
        events[index].compactMap { if case .privateMessage(_, _, let text, _) = $0 { text } else { nil } }
    }

    func peerNames(_ index: Int) -> Set<String> {
        Set(events[index].compactMap { if case .peer(let peer) = $0 { peer.nickname } else { nil } })
    }
}

@Suite("Mesh node core")
struct MeshNodeCoreTests {
    @Test("in a line of five, every node learns every other from signed announcements")
    func announcements() {
        var network = Network.line(5)
        network.run(5_000)
        for index in 0..<5 {
            #expect(network.peerNames(index) == Set((0..<5).filter { $0 != index }.map { "n\($0)" }))
        }
        let peer = network.nodes[0]!.knownPeers.first { $0.nickname == "n4" }
        #expect(peer?.fingerprint == network.identities[4].fingerprint.hex)
    }

    @Test("a public message crosses the line once per node, with its hop count")
    func publicMessage() throws {
        var network = Network.line(5)
        network.run(3_000)
        try network.sendPublic(0, "hello mesh")
        network.run(3_000)
        for index in 1..<5 { #expect(network.publicTexts(index) == ["hello mesh"]) }
        #expect(network.publicTexts(0).isEmpty)
        let hops = network.events[4].compactMap { if case .publicMessage(_, _, let hops, _) = $0 { hops } else { nil } }
        #expect(hops == [4])
    }

    @Test("a private message is readable at its recipient only, and the sender hears it was delivered")
    func privateMessage() throws {
        var network = Network.line(5)
        network.run(3_000)
        let id = try network.sendPrivate(0, "for n4 only", to: 4)
        network.run(5_000)
        #expect(network.privateTexts(4) == ["for n4 only"])
        for index in 0..<4 { #expect(network.privateTexts(index).isEmpty) }
        #expect(network.events[0].contains(.delivered(id: id, to: network.identities[4].peerID)))
        #expect(network.nodes[0]!.pendingPrivateMessages.isEmpty)
    }

    @Test("a node that starts after the messages were sent still receives them (gossip sync and outbox)")
    func storeAndForward() throws {
        var network = Network.line(5, startingAll: false)
        for index in 0..<4 { network.start(index) }
        network.run(3_000)
        try network.sendPublic(0, "before n4 existed")
        let id = try network.sendPrivate(0, "waiting for n4", to: 4)
        network.run(3_000)
        #expect(network.publicTexts(3) == ["before n4 existed"])
        #expect(network.nodes[0]!.pendingPrivateMessages.count == 1)
        network.start(4)
        network.run(20_000)
        #expect(network.publicTexts(4) == ["before n4 existed"])
        #expect(network.privateTexts(4) == ["waiting for n4"])
        #expect(network.events[0].contains(.delivered(id: id, to: network.identities[4].peerID)))
    }

    @Test("a restarted recipient that lost its session still gets the message: it handshakes again")
    func restartedRecipient() throws {
        var network = Network.line(3)
        network.run(3_000)
        try network.sendPrivate(0, "first", to: 2)
        network.run(3_000)
        #expect(network.privateTexts(2) == ["first"])
        network.stop(2)
        network.events[2] = []
        network.run(1_000)
        try network.sendPrivate(0, "second", to: 2)
        network.run(2_000)
        network.start(2)
        network.run(30_000)
        #expect(network.privateTexts(2) == ["second"])
        #expect(network.nodes[0]!.pendingPrivateMessages.isEmpty)
    }

    @Test("private messages survive 20 % frame loss; each is shown once")
    func lossyLine() throws {
        var network = Network.line(4)
        var generator = SeededGenerator(seed: 7)
        let drops = (0..<100_000).map { _ in generator.bytes(1)[0] < 51 }
        network.lose = { drops[$0.sequence % drops.count] }
        network.run(5_000)
        let ids = try (0..<5).map { try network.sendPrivate(0, "message \($0)", to: 3) }
        network.run(60_000)
        #expect(network.privateTexts(3).sorted() == (0..<5).map { "message \($0)" })
        let delivered = network.events[0].compactMap { if case .delivered(let id, _) = $0 { id } else { nil } }
        #expect(Set(delivered) == Set(ids))
    }

    @Test("an announcement with another signing key for a pinned peer ID is refused")
    func forgedAnnouncement() throws {
        var network = Network.line(2)
        network.run(2_000)
        let victim = network.identities[1]
        let forger = MeshIdentity(noiseKey: victim.noiseKey, signingKey: Curve25519.Signing.PrivateKey())
        var packet = MeshPacket(
            type: .announce, ttl: 7, timestamp: network.now, senderID: victim.peerID, recipientID: nil,
            payload: try IdentityAnnouncement(
                nickname: "mallory", noisePublicKey: victim.noiseKey.publicKey, signingPublicKey: forger.signingPublicKey
            ).encoded())
        try packet.sign(using: forger.signingKey)
        let actions = network.nodes[0]!.receive(try packet.encoded(), on: LinkID(1), now: network.now)
        #expect(actions.contains { if case .event(.refused) = $0 { true } else { false } })
        #expect(network.nodes[0]!.knownPeers.map(\.nickname) == ["n1"])
    }

    @Test("a public message with a bad signature is refused; malformed bytes change nothing")
    func badInput() throws {
        var network = Network.line(2)
        network.run(2_000)
        let sender = network.identities[1]
        var packet = MeshPacket(
            type: .message, ttl: 7, timestamp: network.now, senderID: sender.peerID, recipientID: nil,
            payload: try ChatMessage(id: "x", sender: "n1", content: "forged", timestamp: network.now, senderPeerID: nil).encoded())
        try packet.sign(using: Curve25519.Signing.PrivateKey())
        let actions = network.nodes[0]!.receive(try packet.encoded(), on: LinkID(1), now: network.now)
        #expect(actions.contains { if case .event(.refused) = $0 { true } else { false } })
        #expect(!actions.contains { if case .event(.publicMessage) = $0 { true } else { false } })
        for bytes in [[], [1], [UInt8](repeating: 0xFF, count: 600), Array((try packet.encoded()).prefix(20))] {
            #expect(network.nodes[0]!.receive(bytes, on: LinkID(1), now: network.now).isEmpty)
        }
    }

    @Test("a long public message is fragmented and reassembled across relays")
    func fragmented() throws {
        var network = Network.line(3)
        network.run(3_000)
        let text = String(repeating: "0123456789", count: 150)
        try network.sendPublic(0, text)
        network.run(5_000)
        #expect(network.publicTexts(2) == [text])
        #expect(network.publicTexts(1) == [text])
    }
}

@Suite("Mesh node core: compressed payloads")
struct MeshNodeCoreCompressionTests {
    @Test("a public message whose payload arrives compressed is read, and relayed with the bytes received")
    func compressedPublicMessage() throws {
        var network = Network.line(3)
        network.run(3_000)
        let sender = network.identities[0]
        let message = try ChatMessage(id: "z", sender: "n0", content: "squeezed", timestamp: network.now, senderPeerID: nil).encoded()
        // A raw DEFLATE stream of one stored block (RFC 1951 §3.2.4), after the v1 size prefix.
        let length = UInt16(message.count)
        let stream: [UInt8] = [0x01, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)] + message
        var packet = MeshPacket(
            type: .message, ttl: 7, timestamp: network.now, senderID: sender.peerID, recipientID: nil,
            payload: [UInt8(length >> 8), UInt8(length & 0xFF)] + stream, isCompressed: true)
        try packet.sign(using: sender.signingKey)
        var relayed: [[UInt8]] = []
        let actions = network.nodes[1]!.receive(try packet.encoded(), on: LinkID(0), now: network.now)
        let shown = actions.compactMap { action -> (String, Int?)? in
            if case .event(.publicMessage(_, let text, let hops, _)) = action { (text, hops) } else { nil }
        }
        #expect(shown.map(\.0) == ["squeezed"])
        #expect(shown.map(\.1) == [1])
        for _ in 0..<50 {
            network.now += 10
            for action in network.nodes[1]!.tick(now: network.now) {
                if case .send(.packet(let copy, _, _, _), _) = action, copy.type == .message {
                    relayed.append(copy.payload)
                    #expect(copy.isCompressed)
                }
            }
        }
        #expect(relayed == [packet.payload])
    }
}
