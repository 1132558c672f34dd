extension MeshRouter {
    /// A packet (not an acknowledgement) arrived on `link`.
    mutating func handlePacket(
        _ packet: MeshPacket, id: PacketID, hops: UInt8, on link: LinkID, now: MeshTime, into actions: inout [Action]
    ) {
        statistics.packetsReceived += 1
        // REQUEST_SYNC arrives decoded as a SyncRequest frame; an undecoded one is ignored,
        // and like BitChat we never relay it (it is link-local).
        guard packet.type != .requestSync else { return }
        if packet.senderID == localID || seen.contains(id) {
            handleDuplicate(packet, id: id, hops: hops, on: link, now: now, into: &actions)
            return
        }
        // Older than anything a duplicate filter or sync store keeps: it could be a copy the
        // filter has forgotten, so it is dropped rather than delivered twice.
        guard now.milliseconds(since: MeshTime(milliseconds: packet.timestamp)) <= configuration.duplicateWindowMilliseconds
        else { return }
        _ = seen.insert(id, now: now)
        routes.learn(
            origin: packet.senderID, link: link, hops: hops, packetTimestamp: packet.timestamp, isFirst: true, now: now,
            metricWindow: configuration.routeMetricWindowMilliseconds)
        if !spool.isEmpty { flushSpool(for: packet.senderID, now: now, into: &actions) }

        if packet.isBroadcast {
            actions.append(.deliver(packet, id: id))
            if packet.type == .announce, isAnnounceRadiusReached(from: packet.senderID) { return }
            if isSyncable(packet) {
                var stored = packet
                stored.isRSR = false
                store.insert(stored, id: id)
            }
            scheduleRelay(packet, id: id, from: link, directed: false, now: now)
        } else if packet.recipientID == localID {
            acknowledge(id, on: link, into: &actions)
            actions.append(.deliver(packet, id: id))
        } else {
            acknowledge(id, on: link, into: &actions)
            forwardDirected(packet, id: id, from: link, isLocal: false, now: now, into: &actions)
        }
    }

    /// Another copy of a packet already seen: it counts towards suppressing a pending relay,
    /// and the link it came on no longer needs the packet.
    mutating func handleDuplicate(
        _ packet: MeshPacket, id: PacketID, hops: UInt8, on link: LinkID, now: MeshTime, into actions: inout [Action]
    ) {
        statistics.duplicates += 1
        if packet.senderID != localID {
            routes.learn(
                origin: packet.senderID, link: link, hops: hops, packetTimestamp: packet.timestamp, isFirst: false,
                now: now, metricWindow: configuration.routeMetricWindowMilliseconds)
        }
        pendingRelays.update(id.dedupKey) { pending in
            pending.duplicates += 1
            pending.heardFrom.insert(link)
        }
        guard !packet.isBroadcast else { return }
        // A directed copy: the sender may be retrying because our acknowledgement was lost,
        // so acknowledge again. If it came back from the hop we handed it to, that hop has
        // it: as good as an acknowledgement.
        if packet.senderID != localID { acknowledge(id, on: link, into: &actions) }
        if let waiting = custody[id], waiting.link == link {
            custodyAcknowledged(id, on: link, into: &actions)
        }
    }

    /// Whether a node `further` hops beyond this one (0: this node) is as far from `origin`
    /// as ``Configuration/announceRadius`` lets its announces travel (by this node's best
    /// hop count; never without a count, or with radius 0).
    func isAnnounceRadiusReached(from origin: PeerID, hopsFurther further: Int = 0) -> Bool {
        let radius = configuration.announceRadius
        guard radius > 0, let hops = routes.hops(to: origin) else { return false }
        return Int(hops) + further >= Int(radius)
    }

    /// The TTL a relay sends with, or `nil` when the packet must not be relayed
    /// (BitChat's `RelayController` clamp).
    func relayTTL(received ttl: UInt8, degree: Int, isAnnounce: Bool, directed: Bool) -> UInt8? {
        if directed {
            let cap = min(ttl, max(configuration.originTTL, configuration.directedFloodTTL))
            return cap > 1 ? cap - 1 : nil
        }
        let cap = min(ttl, configuration.originTTL)
        guard cap > 1 else { return nil }
        let limit: UInt8
        if degree >= configuration.highDegreeThreshold {
            limit = max(2, min(cap, configuration.denseTTLLimit))
        } else if degree <= configuration.sparseDegree {
            limit = cap
        } else {
            limit = max(2, min(cap, isAnnounce ? configuration.announceTTLLimit : configuration.preferredTTLLimit))
        }
        return limit - 1
    }

    /// The jitter window for a node with `degree` links.
    func jitter(degree: Int, directed: Bool) -> ClosedRange<Int> {
        if directed { return configuration.directedJitter }
        let table = configuration.broadcastJitter
        guard !table.isEmpty else { return 0...0 }
        let index: Int
        switch degree {
        case ...2: index = 0
        case 3...5: index = 1
        case 6...9: index = 2
        default: index = 3
        }
        return table[min(index, table.count - 1)]
    }

    /// Schedules a relay after a jittered delay. A packet obtained through a sync response
    /// (TTL 0, RSR) is relayed as if it had arrived with ``Configuration/syncRelayTTL``.
    mutating func scheduleRelay(_ packet: MeshPacket, id: PacketID, from link: LinkID?, directed: Bool, now: MeshTime) {
        var ttl = packet.ttl
        if packet.isRSR {
            guard configuration.syncRelayTTL > 0 else { return }
            ttl = configuration.syncRelayTTL
        }
        let degree = upLinks.count
        guard let newTTL = relayTTL(received: ttl, degree: degree, isAnnounce: packet.type == .announce, directed: directed)
        else {
            statistics.ttlExpired += 1
            return
        }
        guard upLinks.contains(where: { $0 != link }) else { return }
        var relayed = packet
        relayed.ttl = newTTL
        relayed.isRSR = false
        let delay = random.int(in: jitter(degree: degree, directed: directed))
        pendingRelays[id.dedupKey] = PendingRelay(packet: relayed, heardFrom: LinkSet(link), duplicates: 0)
        timers.insert(.relay(id), at: now.adding(milliseconds: Int64(delay)).milliseconds)
    }

    /// A relay's jitter has passed: send it to the links that have not sent us the packet,
    /// unless enough duplicates arrived meanwhile.
    mutating func fireRelay(_ id: PacketID, now: MeshTime, into actions: inout [Action]) {
        guard let pending = pendingRelays.removeValue(forKey: id.dedupKey) else { return }
        if upLinks.count > configuration.suppressionMinimumDegree,
            pending.duplicates >= configuration.suppressionThreshold
        {
            statistics.relaysSuppressed += 1
            return
        }
        var targets = upLinks.filter { !pending.heardFrom.contains($0) }
        guard !targets.isEmpty else {
            statistics.relaysSuppressed += 1
            return
        }
        let subsetted = pending.packet.isBroadcast && pending.packet.type != .announce && pending.packet.type != .fragment
        let size = subsetted ? configuration.fanOut.size(for: targets.count) : targets.count
        if size < targets.count {
            // A partial Fisher–Yates shuffle picks `size` links at random.
            for index in 0..<size { targets.swapAt(index, random.int(in: index...(targets.count - 1))) }
            targets.removeLast(targets.count - size)
            targets.sort()
        }
        statistics.relaysSent += 1
        actions.append(.transmit(pending.packet, id: id, links: targets, hops: advertisedHops(from: pending.packet.senderID)))
    }
}
