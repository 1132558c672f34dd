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
            at: now.adding(
                milliseconds: configuration.acknowledgementTimeoutMilliseconds
                    + configuration.acknowledgementDelayMilliseconds
            ).milliseconds)
    }

    /// Tells the neighbour on `link` that this node has the directed packet: at once, or
    /// (with an acknowledgement delay) on the next packet this node sends on that link
    /// within the delay, else alone when it runs out.
    mutating func acknowledge(_ id: PacketID, on link: LinkID, into actions: inout [Action]) {
        let acknowledgement = HopAcknowledgement(senderID: localID, packetID: id)
        let delay = configuration.acknowledgementDelayMilliseconds
        guard delay > 0 else {
            statistics.acknowledgementsSent += 1
            actions.append(.sendAcknowledgement(acknowledgement, link: link))
            return
        }
        if let index = pendingAcknowledgements.firstIndex(where: { $0.link == link }) {
            guard !pendingAcknowledgements[index].acknowledgements.contains(acknowledgement) else { return }
            pendingAcknowledgements[index].acknowledgements.append(acknowledgement)
        } else {
            let due = currentTime.adding(milliseconds: delay)
            let entry = PendingAcknowledgements(link: link, due: due, acknowledgements: [acknowledgement])
            let position = pendingAcknowledgements.firstIndex { $0.link > link } ?? pendingAcknowledgements.count
            pendingAcknowledgements.insert(entry, at: position)
            firstAcknowledgementDue = min(firstAcknowledgementDue, due)
            timers.insert(.acknowledgementsDue, at: due.milliseconds)
        }
    }

    /// Puts the waiting acknowledgements on the first packet `actions[first...]` sends on
    /// their link (up to ``MeshFrame/maxAcknowledgementsPerEnvelope``), and sends alone
    /// those whose delay is over.
    mutating func sendPendingAcknowledgements(_ actions: inout [Action], from first: Int) {
        var index = first
        while index < actions.count, !pendingAcknowledgements.isEmpty {
            // Only the links first: most packets go on links with nothing waiting.
            guard case .transmit(_, _, let links, _) = actions[index],
                links.contains(where: { link in pendingAcknowledgements.contains { $0.link == link } }),
                case .transmit(let packet, let id, _, let hops) = actions[index]
            else {
                index += 1
                continue
            }
            var rest: [LinkID] = []
            var carrying: [Action] = []
            for link in links {
                guard let position = pendingAcknowledgements.firstIndex(where: { $0.link == link }) else {
                    rest.append(link)
                    continue
                }
                let waiting = pendingAcknowledgements[position].acknowledgements
                let riding = Array(waiting.prefix(MeshFrame.maxAcknowledgementsPerEnvelope))
                if riding.count == waiting.count {
                    pendingAcknowledgements.remove(at: position)
                } else {
                    pendingAcknowledgements[position].acknowledgements.removeFirst(riding.count)
                }
                statistics.acknowledgementsPiggybacked += riding.count
                carrying.append(.transmitWithAcknowledgements(packet, id: id, link: link, hops: hops, acknowledgements: riding))
            }
            let replacement = (rest.isEmpty ? [] : [Action.transmit(packet, id: id, links: rest, hops: hops)]) + carrying
            actions.replaceSubrange(index...index, with: replacement)
            index += replacement.count
        }
        let now = currentTime
        guard firstAcknowledgementDue <= now else { return }
        firstAcknowledgementDue = MeshTime(milliseconds: .max)
        // In link order (the list is kept sorted): reproducible runs.
        var kept: [PendingAcknowledgements] = []
        for pending in pendingAcknowledgements {
            guard pending.due <= now else {
                firstAcknowledgementDue = min(firstAcknowledgementDue, pending.due)
                kept.append(pending)
                continue
            }
            statistics.acknowledgementsSent += pending.acknowledgements.count
            for acknowledgement in pending.acknowledgements {
                actions.append(.sendAcknowledgement(acknowledgement, link: pending.link))
            }
        }
        pendingAcknowledgements = kept
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
