import InvisoCrypto
public import InvisoTime

/// What a chat reports about its files (``ChatEvent/file(_:)``).
public enum ChatFileEvent: Sendable, Equatable {
    /// We offered a file; it waits for the peer's answer.
    case offered(FileTransferSummary)
    /// The peer offers a file: accept (``ChatClient/acceptFile(_:)``) or refuse it.
    case incoming(FileTransferSummary)
    /// Bytes the receiver holds (on the sending side: as the receiver reported them).
    case progress(id: String, bytes: UInt64, total: UInt64, sending: Bool)
    /// A file arrived whole, its SHA-256 checked; it is at `path`.
    case received(id: String, path: String, sha256: String)
    /// The peer has our file (`verified`: its SHA-256 matched).
    case sent(id: String, verified: Bool)
    /// The peer refused our offer.
    case refused(id: String)
    /// The transfer was cancelled, by the peer or by us.
    case cancelled(id: String, byPeer: Bool)
    /// The transfer failed and ended (the reason is fixed text: no path, no content).
    case failed(id: String, reason: String)
}

/// A transfer as the user sees it.
public struct FileTransferSummary: Sendable, Hashable {
    /// The transfer id (32 hex digits; a prefix names it in commands).
    public var id: String
    /// The name the file gets (the sender's, sanitised: ``SafeFileName``).
    public var name: String
    /// Its size in bytes.
    public var size: UInt64
    /// Whether we send it.
    public var sending: Bool

    /// A summary.
    public init(id: String, name: String, size: UInt64, sending: Bool) {
        self.id = id
        self.name = name
        self.size = size
        self.sending = sending
    }
}

/// The file transfers of one chat session as a value-type state machine: offers and
/// answers, the receiver-driven window, progress, the digest, completion, cancelling, and
/// recovery after a lost path, a reconnect or a restart (`docs/protocol.md`, "Files"). No
/// I/O and no clock: the driver reads and seals chunks, writes and checks them, and feeds
/// the outcome back with the current instant.
///
/// ```
///  sender                                        receiver
///  offered ──file_offer──────────────────────▶  pending ─(user accepts)─▶ receiving
///          ◀──────────file_answer(true) + file_request(from: held)───────┘
///  window: chunks [acked, acked + window) in chunk frames, batches of a few
///          ◀──────────file_progress(held) every few chunks (the window moves)
///  last chunk sent ──file_digest(sha256)──▶   held = count and digest: check, move
///          ◀──────────file_complete(verified)
///  a path change or a stall: send again from `acked`;
///  a gap, a reconnect or a restart: file_request(from: held)
/// ```
///
/// A chunk that arrives is written only when it is the next one the receiver needs;
/// earlier ones (sent twice) are dropped, later ones (a gap: the path lost some) ask for
/// the rest again, at most once per stall interval.
public struct FileTransferMachine: Sendable {
    /// Windows and timings.
    public struct Configuration: Sendable {
        /// Chunks sent and not yet reported held, at most, on the relay: below the
        /// server's 1 MiB queue for a reader (`docs/server.md`), so a slow receiver is
        /// never cut off.
        public var relayWindow: UInt64 = 12
        /// The same on a direct connection: 192 chat chunks (about 11 MiB) in flight. With
        /// 64, the sender waited for reports often enough that a 200 MiB loopback transfer
        /// took about 10 % longer (`inviso bench send`, `docs/protocol.md` "Files").
        public var directWindow: UInt64 = 192
        /// Chunks per batch handed to the path.
        public var chunksPerBatch: UInt64 = 8
        /// Batches handed to the path and not yet written, at most.
        public var batchesInFlight = 2
        /// The receiver reports progress every this many chunks on the relay.
        public var progressEvery: UInt64 = 4
        /// The same on a direct connection: each report is a ratchet message and its ack,
        /// and a small part of the direct window between reports keeps the sender ahead.
        public var directProgressEvery: UInt64 = 16
        /// With chunks outstanding and no progress for this long, the sender sends again
        /// from what the receiver holds; a receiver that got nothing for this long asks.
        public var stallTimeout: Duration = .seconds(5)
        /// At most this many bytes of chunks per second leave, summed over every file we
        /// send (`nil`: as fast as the path takes them), like rsync's `--bwlimit`. A burst
        /// of a quarter second's worth may leave at once.
        public var maxBytesPerSecond: UInt64?

        /// The defaults.
        public init() {}
    }

    /// What happened.
    public enum Input: Sendable {
        /// We offered this file (the driver opened it).
        case offered(FileOffer)
        /// After a restart: a file we had offered, reopened.
        case restoredOutgoing(FileOffer)
        /// After a restart: a file we were receiving, with what the partial file holds.
        case restoredIncoming(FileOffer, held: UInt64, digest: [UInt8]?)
        /// A control message from the peer.
        case control(FileControl)
        /// The user accepted the pending offer; the driver opened its partial file, which
        /// holds `held` chunks.
        case accepted(FileTransferID, held: UInt64)
        /// The user refused the pending offer.
        case refused(FileTransferID)
        /// The user cancelled a transfer.
        case cancelled(FileTransferID)
        /// The driver wrote the next chunk; the partial file holds `held`.
        case chunkStored(FileTransferID, held: UInt64)
        /// A chunk past the next one arrived: the path lost some.
        case chunkGap(FileTransferID)
        /// A chunk did not open or could not be written: the transfer fails.
        case chunkRefused(FileTransferID, reason: String)
        /// The driver checked the hash and moved the file (`path`), or the check failed
        /// (`path` nil: the partial file is gone).
        case finished(FileTransferID, path: String?, sha256: [UInt8])
        /// A batch of ``Action/sendChunks(_:_:generation:)`` was written.
        case batchWritten(FileTransferID, generation: Int)
        /// A batch could not be written (the path went down).
        case batchFailed(FileTransferID, generation: Int)
        /// The file we send could not be read any more (changed, gone).
        case readFailed(FileTransferID)
        /// Messages now travel on a direct path (`true`) or the relay.
        case pathChanged(direct: Bool)
        /// The session is up again (resumed, or the peer came back): ask for what is missing.
        case resync
        /// The timer armed with ``Action/arm(at:)`` fired.
        case timerFired
    }

    /// What the driver does, in order.
    public enum Action: Sendable, Equatable {
        /// Send a control message as a session message.
        case send(FileControl)
        /// Read, seal and send these chunks in chunk frames on the current path; report
        /// ``Input/batchWritten(_:generation:)`` or ``Input/batchFailed(_:generation:)``.
        case sendChunks(FileTransferID, Range<UInt64>, generation: Int)
        /// Every chunk went out: send the file's SHA-256 (``FileControl/digest(_:sha256:)``).
        case sendDigest(FileTransferID)
        /// Check the partial file against this hash and move it into the downloads
        /// folder; report ``Input/finished(_:path:sha256:)``.
        case finish(FileTransferID, sha256: [UInt8])
        /// Keep what a restart needs of an incoming transfer.
        case persistIncoming(FileOffer, digest: [UInt8]?)
        /// The transfer is over: close its file, forget its stored record, and delete the
        /// partial download when `discard`.
        case close(FileTransferID, discard: Bool)
        /// Tell the user.
        case emit(ChatFileEvent)
        /// Report ``Input/timerFired`` at this instant (replaces an earlier one).
        case arm(at: ClockInstant)
    }

    struct Sending: Sendable {
        let offer: FileOffer
        /// The receiver asked for chunks (it accepted).
        var streaming = false
        /// The next chunk to hand to the path.
        var next: UInt64 = 0
        /// Chunks the receiver holds, as it reported.
        var acked: UInt64 = 0
        /// Batches handed to the path and not written yet (this generation).
        var batches = 0
        /// Bumped whenever sending starts again from `acked`: older batches' reports are stale.
        var generation = 0
        var digestSent = false
        /// When `acked` last moved (or streaming started).
        var lastProgress: ClockInstant?
    }

    struct Receiving: Sendable {
        let offer: FileOffer
        var held: UInt64
        var digest: [UInt8]?
        var reported: UInt64
        /// When a chunk last arrived (or we last asked).
        var lastHeard: ClockInstant?
        /// When we last asked after a gap.
        var lastAsked: ClockInstant?
        var finishing = false
    }

    /// The configuration.
    public let configuration: Configuration
    var sending: [FileTransferID: Sending] = [:]
    var receiving: [FileTransferID: Receiving] = [:]
    /// Offers waiting for the user, oldest first.
    public private(set) var pending: [FileOffer] = []
    var direct = false
    var armedAt: ClockInstant?
    /// With ``Configuration/maxBytesPerSecond``: bytes that may leave now, and when that was counted.
    var credit: UInt64 = 0
    var creditAt: ClockInstant?
    /// When the pace next allows a chunk, if a sender waits for it.
    var paceWake: ClockInstant?

    /// A machine with no transfer.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    // MARK: Reading

    /// Whether any transfer is under way or waiting.
    public var isIdle: Bool { sending.isEmpty && receiving.isEmpty && pending.isEmpty }

    /// The transfers under way, as the user sees them.
    public var transfers: [FileTransferSummary] {
        sending.values.map { Self.summary($0.offer, sending: true) } + receiving.values.map { Self.summary($0.offer, sending: false) }
    }

    /// The pending offer named by `prefix` (an id prefix), or the only one when `prefix` is nil.
    public func pendingOffer(_ prefix: String?) -> FileOffer? {
        Self.one(pending.map(\.id), prefix).flatMap { id in pending.first { $0.id == id } }
    }

    /// The transfer under way named by `prefix`, or the only one when `prefix` is nil.
    public func transfer(_ prefix: String?) -> FileTransferID? {
        Self.one(Array(sending.keys) + Array(receiving.keys) + pending.map(\.id), prefix)
    }

    /// Whether we send `id`.
    public func isSending(_ id: FileTransferID) -> Bool { sending[id] != nil }

    private static func one(_ ids: [FileTransferID], _ prefix: String?) -> FileTransferID? {
        let matches = ids.filter { prefix == nil || $0.description.hasPrefix(prefix!.lowercased()) }
        return matches.count == 1 ? matches[0] : nil
    }

    static func summary(_ offer: FileOffer, sending: Bool) -> FileTransferSummary {
        FileTransferSummary(id: offer.id.description, name: SafeFileName.sanitize(offer.name), size: offer.size, sending: sending)
    }

    // MARK: Inputs

    /// Handles one input at `now`; returns what to do.
    public mutating func handle(_ input: Input, at now: ClockInstant) -> [Action] {
        var actions: [Action] = []
        switch input {
        case .offered(let offer):
            sending[offer.id] = Sending(offer: offer)
            actions += [.send(.offer(offer)), .emit(.offered(Self.summary(offer, sending: true)))]
        case .restoredOutgoing(let offer):
            sending[offer.id] = Sending(offer: offer)
        case .restoredIncoming(let offer, let held, let digest):
            receiving[offer.id] = Receiving(offer: offer, held: held, digest: digest, reported: held)
        case .control(let control):
            actions += handle(control, at: now)
        case .accepted(let id, let held):
            guard let index = pending.firstIndex(where: { $0.id == id }) else { break }
            let offer = pending.remove(at: index)
            receiving[id] = Receiving(offer: offer, held: held, reported: held, lastHeard: now)
            actions += [
                .persistIncoming(offer, digest: nil), .send(.answer(id, accepted: true)), .send(.request(id, from: held)),
            ]
        case .refused(let id):
            guard let index = pending.firstIndex(where: { $0.id == id }) else { break }
            pending.remove(at: index)
            actions.append(.send(.answer(id, accepted: false)))
        case .cancelled(let id):
            if let index = pending.firstIndex(where: { $0.id == id }) {
                pending.remove(at: index)
                actions += [.send(.answer(id, accepted: false)), .emit(.cancelled(id: id.description, byPeer: false))]
            } else if sending[id] != nil || receiving[id] != nil {
                actions += end(id, discard: true) + [.send(.cancel(id)), .emit(.cancelled(id: id.description, byPeer: false))]
            }
        case .chunkStored(let id, let held):
            guard var file = receiving[id] else { break }
            file.held = held
            file.lastHeard = now
            let complete = held == file.offer.chunkCount
            let every = direct ? configuration.directProgressEvery : configuration.progressEvery
            if complete || held >= file.reported + every {
                file.reported = held
                actions += [
                    .send(.progress(id, held: held)),
                    .emit(.progress(id: id.description, bytes: Self.bytes(held, of: file.offer), total: file.offer.size, sending: false)),
                ]
            }
            if complete, let digest = file.digest, !file.finishing {
                file.finishing = true
                actions.append(.finish(id, sha256: digest))
            }
            receiving[id] = file
        case .chunkGap(let id):
            guard var file = receiving[id] else { break }
            file.lastHeard = now
            if let asked = file.lastAsked, asked.duration(to: now) < configuration.stallTimeout { receiving[id] = file; break }
            file.lastAsked = now
            receiving[id] = file
            actions.append(.send(.request(id, from: file.held)))
        case .chunkRefused(let id, let reason):
            guard receiving[id] != nil else { break }
            actions += end(id, discard: true) + [.send(.cancel(id)), .emit(.failed(id: id.description, reason: reason))]
        case .finished(let id, let path, let sha256):
            guard receiving[id] != nil else { break }
            actions += end(id, discard: path == nil) + [.send(.complete(id, verified: path != nil))]
            if let path {
                actions.append(.emit(.received(id: id.description, path: path, sha256: Hex.encode(sha256))))
            } else {
                actions.append(.emit(.failed(id: id.description, reason: "its SHA-256 does not match; it was discarded")))
            }
        case .batchWritten(let id, let generation):
            guard var file = sending[id], file.generation == generation else { break }
            file.batches = max(0, file.batches - 1)
            sending[id] = file
            actions += pump(id, at: now)
        case .batchFailed(let id, let generation):
            guard var file = sending[id], file.generation == generation else { break }
            // The path went down: what it did not take goes again once the receiver asks
            // (it does after a reconnect), or after a stall.
            file.batches = 0
            file.generation += 1
            file.next = file.acked
            sending[id] = file
        case .readFailed(let id):
            guard sending[id] != nil else { break }
            actions += end(id, discard: false) + [
                .send(.cancel(id)), .emit(.failed(id: id.description, reason: "the file changed or cannot be read")),
            ]
        case .pathChanged(let isDirect):
            direct = isDirect
            for id in sending.keys.sorted(by: { $0.description < $1.description }) where sending[id]!.streaming {
                rewind(id, at: now)
                actions += pump(id, at: now)
            }
        case .resync:
            for (id, file) in receiving.sorted(by: { $0.key.description < $1.key.description }) {
                if file.held == file.offer.chunkCount, let digest = file.digest {
                    if !file.finishing {
                        receiving[id]!.finishing = true
                        actions.append(.finish(id, sha256: digest))
                    }
                } else {
                    receiving[id]!.lastHeard = now
                    actions.append(.send(.request(id, from: file.held)))
                }
            }
        case .timerFired:
            armedAt = nil
            if paceWake.map({ $0 <= now }) ?? false {
                paceWake = nil
                for id in sending.keys.sorted(by: { $0.description < $1.description }) { actions += pump(id, at: now) }
            }
            for id in sending.keys.sorted(by: { $0.description < $1.description }) {
                guard let file = sending[id], file.streaming, file.next > file.acked, let last = file.lastProgress,
                    last.duration(to: now) >= configuration.stallTimeout
                else { continue }
                rewind(id, at: now)
                actions += pump(id, at: now)
            }
            for id in receiving.keys.sorted(by: { $0.description < $1.description }) {
                guard let file = receiving[id], file.held < file.offer.chunkCount, let last = file.lastHeard,
                    last.duration(to: now) >= configuration.stallTimeout
                else { continue }
                receiving[id]!.lastHeard = now
                actions.append(.send(.request(id, from: file.held)))
            }
        }
        return actions + armIfNeeded(at: now)
    }

    private mutating func handle(_ control: FileControl, at now: ClockInstant) -> [Action] {
        let id = control.transfer
        switch control {
        case .offer(let offer):
            // A second copy (a resumed session delivers again what it had not acked).
            guard sending[id] == nil, receiving[id] == nil, !pending.contains(where: { $0.id == id }) else { return [] }
            pending.append(offer)
            return [.emit(.incoming(Self.summary(offer, sending: false)))]
        case .answer(_, let accepted):
            guard !accepted, sending[id] != nil else { return [] }
            return end(id, discard: false) + [.emit(.refused(id: id.description))]
        case .request(_, let from):
            guard var file = sending[id] else {
                // Not ours (any more): tell the receiver, so that it stops asking.
                return receiving[id] == nil ? [.send(.cancel(id))] : []
            }
            guard from <= file.offer.chunkCount else { return [] }
            file.streaming = true
            file.acked = max(file.acked, from)
            file.next = from
            file.batches = 0
            file.generation += 1
            file.lastProgress = now
            sending[id] = file
            return pump(id, at: now)
        case .progress(_, let held):
            guard var file = sending[id], held <= file.offer.chunkCount, held > file.acked else { return [] }
            file.acked = held
            file.next = max(file.next, held)
            file.lastProgress = now
            sending[id] = file
            return [.emit(.progress(id: id.description, bytes: Self.bytes(held, of: file.offer), total: file.offer.size, sending: true))]
                + pump(id, at: now)
        case .digest(_, let sha256):
            guard var file = receiving[id], file.digest == nil else { return [] }
            file.digest = sha256
            var actions: [Action] = [.persistIncoming(file.offer, digest: sha256)]
            if file.held == file.offer.chunkCount, !file.finishing {
                file.finishing = true
                actions.append(.finish(id, sha256: sha256))
            }
            receiving[id] = file
            return actions
        case .complete(_, let verified):
            guard sending[id] != nil else { return [] }
            return end(id, discard: false) + [
                verified ? .emit(.sent(id: id.description, verified: true))
                    : .emit(.failed(id: id.description, reason: "the peer's SHA-256 did not match")),
            ]
        case .cancel:
            if let index = pending.firstIndex(where: { $0.id == id }) {
                pending.remove(at: index)
                return [.emit(.cancelled(id: id.description, byPeer: true))]
            }
            guard sending[id] != nil || receiving[id] != nil else { return [] }
            return end(id, discard: true) + [.emit(.cancelled(id: id.description, byPeer: true))]
        }
    }

    // MARK: Sending

    /// Hands batches to the path while the window, the batch limit and the pace allow;
    /// after the last chunk, the digest.
    private mutating func pump(_ id: FileTransferID, at now: ClockInstant) -> [Action] {
        guard var file = sending[id], file.streaming else { return [] }
        var actions: [Action] = []
        let count = file.offer.chunkCount
        let window = direct ? configuration.directWindow : configuration.relayWindow
        let chunkSize = UInt64(max(file.offer.chunkSize, 1))
        while file.batches < configuration.batchesInFlight, file.next < count, file.next < file.acked + window {
            var end = min(file.next + configuration.chunksPerBatch, count, file.acked + window)
            if let rate = configuration.maxBytesPerSecond {
                let allowed = paced(rate: rate, chunkSize: chunkSize, wanted: end - file.next, at: now)
                guard allowed > 0 else { break }
                end = file.next + allowed
            }
            actions.append(.sendChunks(id, file.next..<end, generation: file.generation))
            file.next = end
            file.batches += 1
        }
        if file.next == count, !file.digestSent {
            file.digestSent = true
            actions.append(.sendDigest(id))
        }
        sending[id] = file
        return actions
    }

    /// How many of `wanted` chunks the pace lets leave at `now` (spending their credit);
    /// when none, sets ``paceWake`` to when one may.
    private mutating func paced(rate: UInt64, chunkSize: UInt64, wanted: UInt64, at now: ClockInstant) -> UInt64 {
        let rate = max(rate, 1)
        let burst = max(rate / 4, chunkSize)
        if let since = creditAt {
            let elapsed = since.duration(to: now)
            let earned = elapsed <= .zero ? 0 : UInt64(min(Double(burst), Self.seconds(elapsed) * Double(rate)))
            credit = min(burst, credit + earned)
        } else {
            credit = burst
        }
        creditAt = now
        let allowed = min(wanted, credit / chunkSize)
        credit -= allowed * chunkSize
        if allowed == 0 {
            let missing = chunkSize - credit
            let wait = Duration.nanoseconds(Int64((Double(missing) / Double(rate) * 1e9).rounded(.up)))
            let wake = now.advanced(by: max(wait, .milliseconds(1)))
            paceWake = paceWake.map { min($0, wake) } ?? wake
        }
        return allowed
    }

    private static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }

    private mutating func rewind(_ id: FileTransferID, at now: ClockInstant) {
        sending[id]!.next = sending[id]!.acked
        sending[id]!.batches = 0
        sending[id]!.generation += 1
        sending[id]!.lastProgress = now
    }

    private mutating func end(_ id: FileTransferID, discard: Bool) -> [Action] {
        sending[id] = nil
        receiving[id] = nil
        return [.close(id, discard: discard)]
    }

    /// Arms the stall check while something is under way, and the pace's wake-up when
    /// a sender waits for it (whichever comes first).
    private mutating func armIfNeeded(at now: ClockInstant) -> [Action] {
        let active = sending.values.contains { $0.streaming && $0.next > $0.acked } || !receiving.isEmpty
        var deadline = active ? now.advanced(by: configuration.stallTimeout) : nil
        if let wake = paceWake { deadline = deadline.map { min($0, wake) } ?? wake }
        guard let deadline, armedAt.map({ deadline < $0 }) ?? true else { return [] }
        armedAt = deadline
        return [.arm(at: deadline)]
    }

    static func bytes(_ chunks: UInt64, of offer: FileOffer) -> UInt64 {
        min(chunks * UInt64(offer.chunkSize), offer.size)
    }
}
