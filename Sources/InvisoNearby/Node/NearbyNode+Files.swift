import Foundation
import InvisoCrypto
import InvisoKit
import InvisoStore
import InvisoTime
import NIOCore

/// What the store keeps of a transfer being sent: the offer (with its key: the store is
/// sealed), the file's path and the receiver.
struct OutgoingTransferRecord: Codable {
    var offer: Data
    var path: String
    var peer: String
}

/// What the store keeps of a transfer being received (the offer holds its key: sealed).
struct IncomingTransferRecord: Codable {
    var offer: Data
    var peer: String
    /// The sender's SHA-256, once it arrived (absent until then).
    var digest: Data?
}

/// Files (`docs/nearby.md`, "Files"): the transfers with each person run on a
/// ``FileTransferMachine`` of their own — the machine under a chat's files too, so offers,
/// answers, the receiver's window and progress, stalls, resuming after a reconnect or a
/// restart, the digest and completion behave alike in both. This extension is the
/// machine's driver: its control messages go as nearby payloads (reliable) or records
/// (the request and the progress, which the machine repeats when they are lost), its
/// chunks in chunk frames on the person's connection, its events as ``NearbyEvent``s.
extension NearbyNode {
    /// The machine's settings on a nearby connection (always a direct TCP connection):
    /// the direct window, in batches of 16 chunks.
    static var fileConfiguration: FileTransferMachine.Configuration {
        var configuration = FileTransferMachine.Configuration()
        configuration.chunksPerBatch = 16
        configuration.directWindow = 256
        configuration.directProgressEvery = 32
        return configuration
    }

    /// Offers the file at `path` to `name`: a person, or every other member of the group
    /// called `name` (each gets an offer of its own, under a key of its own).
    public func sendFile(_ path: String, to name: String) {
        let keys: [String]
        if let group = groupNamed(name) {
            keys = group.members.filter { $0 != identity.publicKey }.map { Hex.encode($0.bytes) }
                .filter { peers[$0]?.record.accepted == true }
            guard !keys.isEmpty else { return emit(.error("nobody in \(name) to send to")) }
        } else {
            guard let key = peerKey(named: name), let peer = peers[key], peer.record.accepted else {
                return emit(.error("connect to \(name) first (/connect \(name))"))
            }
            keys = [key]
        }
        let absolute = URL(fileURLWithPath: path).standardizedFileURL
        for key in keys {
            let file: OutgoingFile
            do {
                file = try OutgoingFile(path: absolute)
            } catch {
                return emit(.error("cannot send \(path): \(error.code == .io ? "it cannot be read" : "\(error)")"))
            }
            outgoingFiles[file.offer.id] = file
            transferPeers[file.offer.id] = key
            persist(
                OutgoingTransferRecord(offer: Data(file.offer.encoded()), path: absolute.path, peer: key),
                kind: "transfer-out", id: file.offer.id.description)
            runFiles(.offered(file.offer), with: key)
        }
    }

    /// Accepts the offer whose id starts with `id` (or the only pending one).
    public func acceptFile(_ id: String?) {
        guard let (offer, key) = pendingOffer(id) else { return emit(.error("no file offer to accept")) }
        accept(offer, from: key)
    }

    /// Refuses the offer whose id starts with `id` (or the only pending one).
    public func rejectFile(_ id: String?) {
        guard let (offer, key) = pendingOffer(id) else { return emit(.error("no file offer to refuse")) }
        runFiles(.refused(offer.id), with: key)
    }

    /// Stops the transfer whose id starts with `id` (or the only one), either way: the
    /// other side is told, and a partial download is deleted.
    public func cancelFile(_ id: String?) {
        let matches = fileMachines.flatMap { key, machine in
            (machine.transfers.map(\.id) + machine.pending.map(\.id.description))
                .filter { id == nil || $0.hasPrefix(id!.lowercased()) }.map { ($0, key) }
        }
        guard matches.count == 1, let (transfer, key) = matches.first, let machine = fileMachines[key],
            let id = machine.transfer(transfer)
        else {
            return emit(.error(matches.isEmpty ? "no transfer to cancel" : "which transfer? (/cancel ID)"))
        }
        runFiles(.cancelled(id), with: key)
    }

    /// Whether a file offer waits for the user.
    public var hasPendingOffer: Bool { fileMachines.values.contains { !$0.pending.isEmpty } }

    // MARK: - Restoring

    /// Reopens the transfers the store keeps (at start): a partial download resumes from
    /// the chunks it holds, a file being sent from wherever the receiver asks. A file that
    /// is gone or changed is dropped; the receiver's next request is answered with a cancel.
    func restoreTransfers() throws(StoreError) {
        for stored in try store.nearbyRecords(kind: "transfer-in") {
            guard let record = try? JSONDecoder().decode(IncomingTransferRecord.self, from: stored.value),
                let offer = try? FileOffer(decoding: [UInt8](record.offer)),
                let file = try? IncomingFile(offer: offer, downloads: configuration.downloads)
            else { continue }
            incomingFiles[offer.id] = file
            transferPeers[offer.id] = record.peer
            runFiles(
                .restoredIncoming(offer, held: file.heldChunks, digest: record.digest.map { [UInt8]($0) }), with: record.peer)
        }
        for stored in try store.nearbyRecords(kind: "transfer-out") {
            guard let record = try? JSONDecoder().decode(OutgoingTransferRecord.self, from: stored.value),
                let offer = try? FileOffer(decoding: [UInt8](record.offer)),
                let file = try? OutgoingFile(path: URL(fileURLWithPath: record.path), resuming: offer)
            else {
                try? store.saveNearby(records: [], deleting: [("transfer-out", stored.id)])
                continue
            }
            outgoingFiles[offer.id] = file
            transferPeers[offer.id] = record.peer
            runFiles(.restoredOutgoing(offer), with: record.peer)
        }
    }

    // MARK: - What arrives

    /// Handles a file record from `key`; returns whether it was one.
    func fileRecord(_ record: NearbyRecord, from key: String) -> Bool {
        switch record {
        case .fileRequest(let transfer, let from):
            runFiles(.control(.request(transfer, from: from)), with: key)
        case .fileProgress(let transfer, let held):
            runFiles(.control(.progress(transfer, held: held)), with: key)
        default:
            return false
        }
        return true
    }

    /// Handles a chunk frame from `key`: written when it is the next one; an earlier one
    /// (sent twice) is dropped, a later one (a gap) asks again; one that does not open is
    /// dropped like a lost one (chunk frames travel beside the channel's encryption, so
    /// whoever can inject one could drop one too).
    func fileChunk(_ chunk: NearbyChunk, from key: String) {
        guard let file = incomingFiles[chunk.transfer], transferPeers[chunk.transfer] == key else { return }
        if chunk.index < file.heldChunks { return }
        if chunk.index > file.heldChunks { return runFiles(.chunkGap(chunk.transfer), with: key) }
        do {
            try file.write(chunk.sealed, index: chunk.index)
        } catch where error.code == .io {
            return runFiles(.chunkRefused(chunk.transfer, reason: "the downloads folder cannot be written"), with: key)
        } catch {
            return
        }
        runFiles(.chunkStored(chunk.transfer, held: file.heldChunks), with: key)
    }

    /// Handles a file payload delivered in order by the conversation with `key`.
    func filePayload(_ payload: NearbyPayload, from key: String) {
        let control: FileControl
        switch payload {
        case .fileOffer(let offer): control = .offer(offer)
        case .fileAnswer(let transfer, let accepted): control = .answer(transfer, accepted: accepted)
        case .fileComplete(let transfer, let verified): control = .complete(transfer, verified: verified)
        case .fileDigest(let transfer, let sha256): control = .digest(transfer, sha256: sha256)
        case .fileCancel(let transfer): control = .cancel(transfer)
        default: return
        }
        runFiles(.control(control), with: key)
    }

    /// After a (re)connection: the receiver asks for what is missing of every file from
    /// `key` (and finishes what a restart left complete); the sender waits for the asking.
    func resumeTransfers(with key: String) {
        guard fileMachines[key] != nil else { return }
        runFiles(.resync, with: key)
    }

    /// A batch of chunk frames left the socket (or did not).
    func chunksWritten(_ transfer: FileTransferID, generation: Int, to key: String, written: Bool) {
        runFiles(written ? .batchWritten(transfer, generation: generation) : .batchFailed(transfer, generation: generation), with: key)
    }

    /// The stall timer armed for `key`'s transfers fired.
    func fileTimerFired(_ key: String, generation: UInt64) {
        guard fileTimerGenerations[key] == generation else { return }
        runFiles(.timerFired, with: key)
    }

    // MARK: - Driving the machine

    /// Feeds `key`'s file machine (made on first use) and carries out its actions.
    func runFiles(_ input: FileTransferMachine.Input, with key: String) {
        let now = clock.now
        if fileMachines[key] == nil { fileMachines[key] = Self.newFileMachine(at: now) }
        // In place: a copy taken out of the dictionary would copy the machine's tables on write.
        let actions = fileMachines[key]!.handle(input, at: now)
        for action in actions { performFile(action, with: key) }
    }

    private static func newFileMachine(at now: ClockInstant) -> FileTransferMachine {
        var machine = FileTransferMachine(configuration: fileConfiguration)
        // A nearby connection is a direct one; with no transfer yet this does nothing else.
        _ = machine.handle(.pathChanged(direct: true), at: now)
        return machine
    }

    private func performFile(_ action: FileTransferMachine.Action, with key: String) {
        switch action {
        case .send(let control):
            sendFileControl(control, to: key)
        case .sendChunks(let transfer, let range, let generation):
            sendChunks(transfer, range, generation: generation, to: key)
        case .sendDigest(let transfer):
            guard let file = outgoingFiles[transfer] else { break }
            do {
                sendFileControl(.digest(transfer, sha256: try file.completeDigest()), to: key)
            } catch {
                runFiles(.readFailed(transfer), with: key)
            }
        case .finish(let transfer, let sha256):
            guard let file = incomingFiles[transfer] else { break }
            let path = try? file.finish(expecting: sha256)
            runFiles(.finished(transfer, path: path?.path, sha256: sha256), with: key)
        case .persistIncoming(let offer, let digest):
            persist(
                IncomingTransferRecord(offer: Data(offer.encoded()), peer: key, digest: digest.map { Data($0) }),
                kind: "transfer-in", id: offer.id.description)
        case .close(let transfer, let discard):
            if discard { incomingFiles[transfer]?.discard() }
            incomingFiles[transfer] = nil
            outgoingFiles[transfer] = nil
            transferPeers[transfer] = nil
            forget(kind: "transfer-in", id: transfer.description)
            forget(kind: "transfer-out", id: transfer.description)
        case .emit(let event):
            emitFile(event, with: key)
        case .arm(let deadline):
            let generation = (fileTimerGenerations[key] ?? 0) + 1
            fileTimerGenerations[key] = generation
            let clock = clock
            let sink = inputContinuation
            Task {
                do { try await clock.sleep(until: deadline, tolerance: nil) } catch { return }
                sink.yield(.fileTimer(key, generation))
            }
        }
    }

    /// A control message: the request and the progress as records on the connection
    /// (lost with it, and asked again by the machine), the rest as reliable payloads.
    private func sendFileControl(_ control: FileControl, to key: String) {
        switch control {
        case .offer(let offer): enqueuePayload(.fileOffer(offer), to: key)
        case .answer(let transfer, let accepted): enqueuePayload(.fileAnswer(transfer, accepted: accepted), to: key)
        case .request(let transfer, let from): transmit([.fileRequest(transfer, fromChunk: from)], to: key)
        case .progress(let transfer, let held): transmit([.fileProgress(transfer, held: held)], to: key)
        case .digest(let transfer, let sha256): enqueuePayload(.fileDigest(transfer, sha256: sha256), to: key)
        case .complete(let transfer, let verified): enqueuePayload(.fileComplete(transfer, verified: verified), to: key)
        case .cancel(let transfer): enqueuePayload(.fileCancel(transfer), to: key)
        }
    }

    /// Reads and seals a batch and writes it as one buffer on `key`'s connection; the
    /// write's outcome comes back as ``NearbyNode/Input/chunksWritten(_:_:generation:written:)``.
    private func sendChunks(_ transfer: FileTransferID, _ range: Range<UInt64>, generation: Int, to key: String) {
        let sink = inputContinuation
        guard let file = outgoingFiles[transfer], let linkID = peers[key]?.link, let link = links[linkID],
            link.machine.phase == .open
        else {
            // No connection: the batch failed; the receiver asks again when it is back.
            sink.yield(.chunksWritten(key, transfer, generation: generation, written: false))
            return
        }
        let offer = file.offer
        var buffer = link.channel.allocator.buffer(
            capacity: range.count * (Int(offer.chunkSize) + NearbyFrameDecoder.chunkHeaderBytes + FileChunkCipher.overhead))
        for index in range {
            let sealed: [UInt8]
            do {
                sealed = try file.sealedChunk(index)
            } catch {
                return runFiles(.readFailed(transfer), with: key)
            }
            buffer.writeBytes(NearbyFrameDecoder.chunkHeader(transfer: transfer, index: index, sealedCount: sealed.count))
            buffer.writeBytes(sealed)
        }
        let promise = link.channel.eventLoop.makePromise(of: Void.self)
        promise.futureResult.whenComplete { result in
            if case .failure = result {
                sink.yield(.chunksWritten(key, transfer, generation: generation, written: false))
            } else {
                sink.yield(.chunksWritten(key, transfer, generation: generation, written: true))
            }
        }
        link.channel.writeAndFlush(buffer, promise: promise)
    }

    /// The machine's events as the nearby chat's; an offer from a verified person up to
    /// the auto-accept size is accepted instead of asked about.
    private func emitFile(_ event: ChatFileEvent, with key: String) {
        let name = peers[key]?.record.name ?? "?"
        switch event {
        case .offered(let summary):
            emit(.fileProgress(peer: name, id: summary.id, bytes: 0, total: summary.size, sending: true))
        case .incoming(let summary):
            if peers[key]?.record.verified == true, summary.size <= configuration.autoAcceptBytes,
                let offer = fileMachines[key]?.pendingOffer(summary.id)
            {
                return accept(offer, from: key)
            }
            emit(.fileOffer(from: name, id: summary.id, name: summary.name, size: summary.size))
        case .progress(let id, let bytes, let total, let sending):
            emit(.fileProgress(peer: name, id: id, bytes: bytes, total: total, sending: sending))
        case .received(let id, let path, let sha256):
            emit(.fileReceived(from: name, id: id, path: path, sha256: sha256))
        case .sent(let id, let verified):
            emit(.fileSent(to: name, id: id, verified: verified))
        case .refused(let id):
            emit(.fileRefused(by: name, id: id))
        case .cancelled(let id, let byPeer):
            emit(.fileCancelled(peer: name, id: id, byPeer: byPeer))
        case .failed(let id, let reason):
            emit(.error("the file \(id.prefix(8)) with \(name) failed: \(reason)"))
        }
    }

    /// Opens the partial file of `offer` and tells the machine (or refuses, when the
    /// downloads folder cannot be used).
    private func accept(_ offer: FileOffer, from key: String) {
        let file: IncomingFile
        do {
            file = try IncomingFile(offer: offer, downloads: configuration.downloads)
        } catch {
            emit(.error("cannot write into \(configuration.downloads.path): \(error)"))
            return runFiles(.refused(offer.id), with: key)
        }
        incomingFiles[offer.id] = file
        transferPeers[offer.id] = key
        runFiles(.accepted(offer.id, held: file.heldChunks), with: key)
    }

    /// Queues a payload on the conversation with `key` (sent now if connected).
    func enqueuePayload(_ payload: NearbyPayload, to key: String) {
        guard var peer = peers[key] else { return }
        do {
            let (_, records) = try peer.conversation.enqueue(payload)
            peers[key] = peer
            save(key)
            transmit(records, to: key)
        } catch {
            emit(.error("not sent: \(error)"))
        }
    }

    /// The pending offer named by `prefix` (or the only one), with whom it is from.
    private func pendingOffer(_ prefix: String?) -> (FileOffer, String)? {
        let matches = fileMachines.flatMap { key, machine in
            machine.pending.filter { prefix == nil || $0.id.description.hasPrefix(prefix!.lowercased()) }.map { ($0, key) }
        }
        return matches.count == 1 ? matches[0] : nil
    }
}
