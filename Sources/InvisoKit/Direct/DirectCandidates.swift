import InvisoWire

/// Which addresses a listener tells the peer to dial (docs/direct.md, "Candidates").
enum DirectCandidates {
    /// The candidates for a listener bound to `boundAddress`:`port`.
    ///
    /// - A specific address: that address only.
    /// - `0.0.0.0`: every IPv4 address of `interfaceAddresses`; `::` every IPv4 and IPv6
    ///   address. Link-local IPv6 (`fe80::/10`, unusable without a scope id) is skipped,
    ///   duplicates are dropped, and loopback comes last (it reaches only this machine, which
    ///   is still useful for two clients on one host). At most
    ///   ``TransportCandidates/maxCandidates``.
    static func gather(
        boundAddress: String, port: Int, interfaceAddresses: [String]
    ) -> [TransportCandidates.Candidate] {
        let wildcardV4 = boundAddress == "0.0.0.0"
        let wildcardV6 = boundAddress == "::" || boundAddress == "::0"
        guard wildcardV4 || wildcardV6 else {
            return [TransportCandidates.Candidate(host: boundAddress, port: port)]
        }
        var seen: Set<String> = []
        var regular: [String] = []
        var loopback: [String] = []
        for address in interfaceAddresses {
            let isV6 = address.contains(":")
            // `::` is dual-stack (NIO leaves IPV6_V6ONLY off), so it takes IPv4 too.
            guard isV6 ? wildcardV6 : (wildcardV4 || wildcardV6) else { continue }
            guard !address.isEmpty, !isLinkLocalV6(address), !isUnspecified(address), seen.insert(address).inserted else {
                continue
            }
            if isLoopback(address) { loopback.append(address) } else { regular.append(address) }
        }
        let ordered = regular.filter { !$0.contains(":") } + regular.filter { $0.contains(":") } + loopback
        return ordered.prefix(TransportCandidates.maxCandidates).map { TransportCandidates.Candidate(host: $0, port: port) }
    }

    static func isLinkLocalV6(_ address: String) -> Bool {
        let lower = address.lowercased()
        return ["fe8", "fe9", "fea", "feb"].contains { lower.hasPrefix($0) } || lower.contains("%")
    }

    static func isLoopback(_ address: String) -> Bool {
        address.hasPrefix("127.") || address == "::1"
    }

    static func isUnspecified(_ address: String) -> Bool {
        address == "0.0.0.0" || address == "::"
    }
}
