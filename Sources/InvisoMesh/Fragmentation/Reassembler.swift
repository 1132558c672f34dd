/// Collects fragments and returns the original packet's bytes once all have arrived.
///
/// A value-type state machine: feed it fragment packets with the current time, and it
/// answers with the reassembled bytes, `nil` (waiting for more), or a ``MeshWireError``.
/// A rejected fragment leaves the state as it was (apart from dropping expired sets, which
/// every call does first). Fragments may arrive in any order; an exact duplicate is
/// ignored, and so is any fragment of a set completed within the timeout (in a flooding
/// mesh the same fragment arrives from several neighbours, and a late copy must not open a
/// new set that waits 30 seconds for fragments already delivered).
///
/// Sets are keyed by sender and fragment ID (Android keys by ID alone, so two senders
/// picking the same random ID would collide there). Limits follow BitChat: 128 sets at
/// once (`bleMaxInFlightAssemblies`), 30 seconds from the first fragment
/// (`bleFragmentLifetimeSeconds`, permissionlesstech/bitchat
/// bitchat/Services/TransportConfig.swift@3466d0d10db265df10f9a36bf054de487a252684), and a
/// byte budget over all sets, 1 MiB by default (our choice; BitChat budgets per type).
///
/// BitChat clients give a reassembled packet TTL 0 before handling it, so that it is not
/// relayed again (the fragments were); that policy belongs to the router, not here.
public struct Reassembler: Equatable, Sendable {
    /// Resource limits.
    public struct Limits: Hashable, Sendable {
        /// Fragment sets held at once.
        public var maxConcurrentReassemblies: Int
        /// How long a set may take, from its first fragment, in milliseconds.
        public var timeoutMilliseconds: UInt64
        /// Chunk bytes held over all sets; also bounds one reassembled packet.
        public var maxBufferedBytes: Int

        /// Creates limits.
        public init(maxConcurrentReassemblies: Int, timeoutMilliseconds: UInt64, maxBufferedBytes: Int) {
            self.maxConcurrentReassemblies = maxConcurrentReassemblies
            self.timeoutMilliseconds = timeoutMilliseconds
            self.maxBufferedBytes = maxBufferedBytes
        }

        /// 128 sets, 30 seconds, 1 MiB.
        public static let `default` = Limits(
            maxConcurrentReassemblies: 128, timeoutMilliseconds: 30_000, maxBufferedBytes: 1 << 20)
    }

    /// The most bytes a fragment packet's payload may decompress to (BitChat's receive cap
    /// for fragments, `PacketPayloadLimits`: 1,280 bytes). iOS compresses any low-entropy
    /// payload of 100 bytes or more, fragments included.
    public static let maxFragmentPayloadBytes = 1_280

    private struct Key: Hashable, Sendable {
        var sender: PeerID
        var fragmentID: UInt64
    }

    private struct Assembly: Equatable, Sendable {
        var originalType: MessageType
        var total: UInt16
        var startedAt: UInt64
        var chunks: [UInt16: [UInt8]] = [:]
        var byteCount = 0
    }

    /// The limits in force.
    public let limits: Limits
    private var assemblies: [Key: Assembly] = [:]
    /// Sets completed within the timeout, with their completion time; at most
    /// ``completedMemory`` entries, the oldest dropped first.
    private var completed: [Key: UInt64] = [:]
    /// The earliest start or completion time held, so that expiry scans only when something
    /// can have expired; `UInt64.max` when nothing is held.
    private var earliest = UInt64.max
    /// Chunk bytes currently held over all sets.
    public private(set) var bufferedBytes = 0

    /// Creates an empty reassembler.
    public init(limits: Limits = .default) {
        self.limits = limits
    }

    /// Fragment sets in progress.
    public var activeReassemblies: Int { assemblies.count }

    /// How many completed sets are remembered to ignore their late copies: 8 per
    /// concurrent set.
    public var completedMemory: Int { max(1, limits.maxConcurrentReassemblies * 8) }

    /// Takes a fragment packet.
    ///
    /// - Parameters:
    ///   - packet: A packet of type ``MessageType/fragment`` (its payload may be compressed).
    ///   - now: The current time in milliseconds (any monotonic origin).
    /// - Returns: The original packet's encoded bytes when this fragment completes the set
    ///   (decode them with ``MeshPacket/decode(_:maximumSize:)``), otherwise `nil`.
    /// - Throws: ``MeshWireError/notAFragment``; what decoding the fragment payload throws;
    ///   ``MeshWireError/invalidField`` (total 0, index ≥ total, empty chunk);
    ///   ``MeshWireError/conflictingFragment``; ``MeshWireError/reassemblyLimit``.
    public mutating func receive(_ packet: MeshPacket, now: UInt64) throws(MeshWireError) -> [UInt8]? {
        removeExpired(now: now)
        guard packet.type == .fragment else { throw MeshWireError(.notAFragment) }
        let fragment = try FragmentPayload(
            decoding: try packet.decompressedPayload(limit: Self.maxFragmentPayloadBytes))
        return try receive(fragment, from: packet.senderID, now: now)
    }

    /// Takes a decoded fragment payload from `sender`; see ``receive(_:now:)``.
    public mutating func receive(
        _ fragment: FragmentPayload, from sender: PeerID, now: UInt64
    ) throws(MeshWireError) -> [UInt8]? {
        removeExpired(now: now)
        let header = fragment.header
        guard header.isConsistent else { throw MeshWireError(.invalidField, "fragment index or total") }
        guard !fragment.chunk.isEmpty else { throw MeshWireError(.invalidField, "empty fragment") }
        guard Int(header.total) <= limits.maxBufferedBytes else {
            throw MeshWireError(.reassemblyLimit, "more fragments than the byte budget")
        }
        let key = Key(sender: sender, fragmentID: header.fragmentID)
        if completed[key] != nil { return nil }
        var assembly: Assembly
        if let existing = assemblies[key] {
            guard existing.total == header.total, existing.originalType == header.originalType else {
                throw MeshWireError(.conflictingFragment, "total or original type")
            }
            if let held = existing.chunks[header.index] {
                guard held == fragment.chunk else { throw MeshWireError(.conflictingFragment, "different bytes") }
                return nil
            }
            assembly = existing
        } else {
            guard assemblies.count < limits.maxConcurrentReassemblies else {
                throw MeshWireError(.reassemblyLimit, "concurrent reassemblies")
            }
            assembly = Assembly(originalType: header.originalType, total: header.total, startedAt: now)
        }
        guard fragment.chunk.count <= limits.maxBufferedBytes - bufferedBytes else {
            throw MeshWireError(.reassemblyLimit, "buffered bytes")
        }
        earliest = min(earliest, assembly.startedAt)

        assembly.chunks[header.index] = fragment.chunk
        assembly.byteCount += fragment.chunk.count
        bufferedBytes += fragment.chunk.count
        guard assembly.chunks.count == Int(assembly.total) else {
            assemblies[key] = assembly
            return nil
        }
        assemblies[key] = nil
        bufferedBytes -= assembly.byteCount
        if completed.count >= completedMemory, let oldest = completed.min(by: { $0.value < $1.value })?.key {
            completed[oldest] = nil
        }
        completed[key] = now
        earliest = min(earliest, now)
        var packet: [UInt8] = []
        packet.reserveCapacity(assembly.byteCount)
        for index in 0..<assembly.total {
            // Every index below `total` is present: there are `total` distinct ones.
            packet.append(contentsOf: assembly.chunks[index] ?? [])
        }
        return packet
    }

    /// Drops the sets whose first fragment arrived ``Limits/timeoutMilliseconds`` or more
    /// before `now`, and forgets sets completed that long ago (a clock that went backwards
    /// counts as no time passed).
    public mutating func removeExpired(now: UInt64) {
        let (deadline, overflow) = earliest.addingReportingOverflow(limits.timeoutMilliseconds)
        guard !overflow, now >= deadline else { return }
        for (key, assembly) in assemblies where isExpired(since: assembly.startedAt, now: now) {
            bufferedBytes -= assembly.byteCount
            assemblies[key] = nil
        }
        for (key, completedAt) in completed where isExpired(since: completedAt, now: now) {
            completed[key] = nil
        }
        earliest = min(
            assemblies.values.lazy.map(\.startedAt).min() ?? .max, completed.values.min() ?? .max)
    }

    private func isExpired(since start: UInt64, now: UInt64) -> Bool {
        (now >= start ? now - start : 0) >= limits.timeoutMilliseconds
    }
}
