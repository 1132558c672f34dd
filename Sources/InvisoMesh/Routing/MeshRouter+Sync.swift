extension MeshRouter {
    /// A periodic round: one REQUEST_SYNC to the next neighbour in turn.
    mutating func periodicSync(now: MeshTime, into actions: inout [Action]) {
        let interval = configuration.syncIntervalMilliseconds
        guard interval > 0 else { return }
        if !upLinks.isEmpty {
            let link = upLinks[syncRoundRobin % upLinks.count]
            syncRoundRobin &+= 1
            sendSyncRequest(on: link, now: now, into: &actions)
        }
        let next = random.int(in: Int(interval / 2)...Int(interval + interval / 2))
        timers.insert(.periodicSync, at: now.adding(milliseconds: Int64(next)).milliseconds)
    }

    /// Sends a REQUEST_SYNC listing (newest first, within the byte budget) the packets in
    /// the store.
    mutating func sendSyncRequest(on link: LinkID, now: MeshTime, into actions: inout [Action]) {
        if syncFilterCache?.storeVersion != store.version {
            syncFilterCache = buildSyncFilter()
        }
        guard let (_, filter, since) = syncFilterCache else { return }
        statistics.syncRequestsSent += 1
        actions.append(
            .sendSyncRequest(
                SyncRequest(senderID: localID, timestamp: now.milliseconds, filter: filter, sinceTimestamp: since),
                link: link))
    }

    /// The filter of the store's newest packets, within the byte budget, and when not
    /// everything fits, the timestamp of the oldest packet it covers.
    mutating func buildSyncFilter() -> (storeVersion: UInt64, filter: GolombCodedSet, since: UInt64?) {
        // Only as many of the newest packets as the budget could hold are looked at.
        let p = GolombCodedSet.parameter(falsePositiveRate: configuration.syncFalsePositiveRate)
        let limit = max(1, max(8, configuration.syncFilterMaxBytes * 8) / max(3, Int(p) + 2))
        var hashes: [UInt64] = []
        hashes.reserveCapacity(min(limit, store.count))
        store.forEachNewestFirst { key in
            hashes.append(key.syncHash)
            return hashes.count < limit
        }
        let (filter, included) = GolombCodedSet.build(
            newestFirst: hashes, maxBytes: configuration.syncFilterMaxBytes,
            falsePositiveRate: configuration.syncFalsePositiveRate)
        var since: UInt64?
        if included < store.count, included > 0 {
            var visited = 0
            store.forEachNewestFirst { key in
                visited += 1
                guard visited == included else { return true }
                since = key.timestamp
                return false
            }
        }
        return (store.version, filter, since)
    }

    /// Answers a REQUEST_SYNC: every stored packet the filter does not list goes back as a
    /// sync response (TTL 0, RSR flag), as in BitChat. If the filter lists packets this
    /// node lacks, it asks back.
    mutating func handleSyncRequest(_ request: SyncRequest, on link: LinkID, now: MeshTime, into actions: inout [Action]) {
        guard isUp(link) else { return }
        var log = (responseLog[link] ?? []).filter {
            now.milliseconds(since: $0) < configuration.syncResponseWindowMilliseconds
        }
        guard log.count < configuration.syncResponsesPerWindow else { return }
        log.append(now)
        responseLog[link] = log
        statistics.syncRequestsAnswered += 1

        let membership = request.filter.membership()
        let wantsReversePull = shouldPullBack(on: link, now: now) && !membership.isEmpty
        var ours = GolombCodedSet.BucketSet(m: wantsReversePull ? request.filter.m : 0)
        let since = request.sinceTimestamp ?? 0
        var responses: [GossipStore.Key] = []
        store.forEachNewestFirst { key in
            // The requester's filter lists only packets from `since` on; older ones are not
            // missing, just not listed. (BitChat exempts announces from the cursor; with many
            // peers that re-sends every old announce each round, so we do not.)
            guard key.timestamp >= since else { return false }
            if wantsReversePull { ours.insert(GolombCodedSet.bucket(key.syncHash, m: request.filter.m)) }
            if !membership.mightContain(key.syncHash) { responses.append(key) }
            return true
        }
        let target = [link]
        for key in responses {
            // One hop short of the radius: the requester would not keep the announce, and
            // would be sent it again every round.
            if let origin = key.announceSender, isAnnounceRadiusReached(from: origin, hopsFurther: 1) { continue }
            let entry = store[key]
            var response = entry.packet
            response.ttl = 0
            response.isRSR = true
            statistics.syncResponsesSent += 1
            actions.append(.transmit(response, id: entry.id, links: target, hops: advertisedHops(from: response.senderID)))
        }
        // A bucket in their filter that none of our packets falls in is a packet we lack.
        guard wantsReversePull, !membership.bucketSet.isSubset(of: ours) else { return }
        lastReversePull[link] = now
        sendSyncRequest(on: link, now: now, into: &actions)
    }

    func shouldPullBack(on link: LinkID, now: MeshTime) -> Bool {
        let interval = configuration.reversePullIntervalMilliseconds
        guard interval > 0 else { return false }
        guard let last = lastReversePull[link] else { return true }
        return now.milliseconds(since: last) >= interval
    }

    /// Prunes the duplicate filter, stores, routes and spool.
    mutating func maintain(now: MeshTime, into actions: inout [Action]) {
        seen.expire(now: now)
        store.expire(
            now: now, maxAge: configuration.syncMaxAgeMilliseconds,
            announceMaxAge: configuration.announceMaxAgeMilliseconds)
        if now.milliseconds(since: lastRoutePrune) >= configuration.routeLifetimeMilliseconds / 2 {
            routes.expire(now: now, lifetime: configuration.routeLifetimeMilliseconds)
            lastRoutePrune = now
        }
        for entry in spool.isEmpty ? [] : spool.expire(now: now, window: configuration.spoolWindowMilliseconds) where entry.isLocal {
            actions.append(.report(entry.id, .failed(.spoolExpired)))
        }
        if !responseLog.isEmpty {
            responseLog = responseLog.filter { log in
                log.value.contains { now.milliseconds(since: $0) < configuration.syncResponseWindowMilliseconds }
            }
        }
        timers.insert(.maintenance, at: now.adding(milliseconds: configuration.maintenanceIntervalMilliseconds).milliseconds)
    }
}
