extension MeshRouter {
    /// Forwards a directed packet this node holds: to the recipient if it is a neighbour,
    /// else to the route's next hop (never back where it came from), waiting for a per-hop
    /// acknowledgement; with no route it is flooded (TTL-limited) and spooled.
    mutating func forwardDirected(
        _ packet: MeshPacket, id: PacketID, from upstream: LinkID?, isLocal: Bool, now: MeshTime,
        into actions: inout [Action]
    ) {
        guard let recipient = packet.recipientID else { return }
        if let link = peerLinks[recipient] ?? routes.nextHop(
            to: recipient, excluding: upstream, now: currentTime, lifetime: configuration.routeLifetimeMilliseconds, isUp: isUp) {
            var outgoing = packet
            // Under custody with acknowledgements the packet cannot loop (every node drops a
            // second copy), so the TTL does not end it: it never drops below 1.
            if !isLocal { outgoing.ttl = max(1, packet.ttl &- 1) }
            outgoing.isRSR = false
            custody[id] = Custody(
                packet: outgoing, recipient: recipient, link: link, attempts: 0, tried: [], upstream: upstream,
                isLocal: isLocal)
            sendUnderCustody(id, on: link, now: now, into: &actions)
            return
        }
        // No way known: keep it for when the recipient or a route shows up, and flood it now.
        spoolPacket(packet, id: id, recipient: recipient, isLocal: isLocal, now: now, into: &actions)
        statistics.directedFloods += 1
        if isLocal {
            var flooded = packet
            flooded.ttl = max(packet.ttl, configuration.directedFloodTTL)
            if !upLinks.isEmpty { actions.append(.transmit(flooded, id: id, links: upLinks, hops: advertisedHops(from: localID))) }
            actions.append(.report(id, .flooded))
        } else {
            scheduleRelay(packet, id: id, from: upstream, directed: true, now: now)
        }
    }

    /// (Re)sends the packet in custody on `link` and arms the acknowledgement timer.
    mutating func sendUnderCustody(_ id: PacketID, on link: LinkID, now: MeshTime, into actions: inout [Action]) {
        guard var entry = custody[id] else { return }
        if entry.link == link, entry.attempts > 0 { statistics.retransmissions += 1 }
        if entry.link != link || !entry.tried.contains(link) {
            entry.link = link
            entry.attempts = 0
            entry.tried.append(link)
        }
        entry.attempts += 1
        custody[id] = entry
        statistics.unicastsSent += 1
        actions.append(.transmit(entry.packet, id: id, links: [link], hops: advertisedHops(from: entry.packet.senderID)))
        timers.insert(
            .acknowledgement(id, attempt: entry.attempts + entry.tried.count * 1_000),
            at: now.adding(milliseconds: configuration.acknowledgementTimeoutMilliseconds).milliseconds)
    }

    /// Tells the neighbour on `link` that this node has the directed packet.
    mutating func acknowledge(_ id: PacketID, on link: LinkID, into actions: inout [Action]) {
        statistics.acknowledgementsSent += 1
        actions.append(.sendAcknowledgement(HopAcknowledgement(senderID: localID, packetID: id), link: link))
    }

    /// An acknowledgement arrived.
    mutating func handleAcknowledgement(
        _ acknowledgement: HopAcknowledgement, on link: LinkID, now: MeshTime, into actions: inout [Action]
    ) {
        guard let entry = custody[acknowledgement.packetID], entry.link == link else { return }
        custodyAcknowledged(acknowledgement.packetID, on: link, into: &actions)
    }

    mutating func custodyAcknowledged(_ id: PacketID, on link: LinkID, into actions: inout [Action]) {
        guard let entry = custody.removeValue(forKey: id) else { return }
        if entry.isLocal { actions.append(.report(id, .acknowledged(by: linkPeers[link]))) }
    }

    /// No acknowledgement in time: retry the same hop, then the alternate, then spool.
    mutating func acknowledgementTimedOut(_ id: PacketID, attempt: Int, now: MeshTime, into actions: inout [Action]) {
        guard let entry = custody[id], entry.attempts + entry.tried.count * 1_000 == attempt else { return }
        if entry.attempts < configuration.attemptsPerHop, isUp(entry.link) {
            sendUnderCustody(id, on: entry.link, now: now, into: &actions)
        } else {
            giveUpOnHop(id, now: now, into: &actions)
        }
    }

    /// The current next hop failed (or its link went down): forget that route and try
    /// another link, else spool and flood.
    mutating func giveUpOnHop(_ id: PacketID, now: MeshTime, into actions: inout [Action]) {
        guard let entry = custody[id] else { return }
        routes.forget(link: entry.link, for: entry.recipient)
        if peerLinks[entry.recipient] == entry.link, !isUp(entry.link) { peerLinks[entry.recipient] = nil }
        let alternative = [peerLinks[entry.recipient], routes.nextHop(
                to: entry.recipient, excluding: entry.upstream, now: currentTime,
                lifetime: configuration.routeLifetimeMilliseconds, isUp: isUp)]
            .compactMap { $0 }
            .first { !entry.tried.contains($0) && isUp($0) }
        if let alternative {
            sendUnderCustody(id, on: alternative, now: now, into: &actions)
            return
        }
        custody[id] = nil
        spoolPacket(entry.packet, id: id, recipient: entry.recipient, isLocal: entry.isLocal, now: now, into: &actions)
        statistics.directedFloods += 1
        scheduleRelay(entry.packet, id: id, from: entry.upstream, directed: true, now: now)
    }

    // MARK: - Spool

    mutating func spoolPacket(
        _ packet: MeshPacket, id: PacketID, recipient: PeerID, isLocal: Bool, now: MeshTime, into actions: inout [Action]
    ) {
        statistics.spooled += 1
        let evicted = spool.add(RelaySpool.Entry(packet: packet, id: id, spooledAt: now, isLocal: isLocal), for: recipient)
        for entry in evicted where entry.isLocal { actions.append(.report(entry.id, .failed(.spoolOverflow))) }
    }

    /// Sends what is spooled for `recipient` if there is now a way to it.
    mutating func flushSpool(for recipient: PeerID, now: MeshTime, into actions: inout [Action]) {
        guard spool.hasEntries(for: recipient), nextHop(to: recipient) != nil else { return }
        for entry in spool.take(for: recipient) where custody[entry.id] == nil {
            forwardDirected(entry.packet, id: entry.id, from: nil, isLocal: entry.isLocal, now: now, into: &actions)
        }
    }
}
