public import Foundation
import InvisoCrypto
import InvisoStore
import InvisoTime

/// Chunk frames of one batch of a transfer, queued on a path.
struct ChunkBatch: Sendable {
    let transfer: FileTransferID
    let generation: Int
    let frames: [[UInt8]]
}

/// What the store keeps of a file being sent in a chat: the offer (its key included; the
/// store is sealed) and the file's path.
struct ChatOutgoingFileRecord: Codable {
    var offer: Data
    var path: String
}

/// What the store keeps of a file being received in a chat.
struct ChatIncomingFileRecord: Codable {
    var offer: Data
    var digest: Data?
}

// MARK: - Files: the I/O around FileTransferMachine

extension ChatClient {
    /// Store kinds of the transfer records (ids: `session/transfer`).
    static let outgoingFileKind = "chat-file-out"
    static let incomingFileKind = "chat-file-in"

    /// Offers the file at `path` to the peer (v2 sessions): it is sent once the peer
    /// accepts, over whichever path carries the session, and resumes after a reconnect,
    /// a path change or a restart of either side (``resume(sessionID:)``).
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - name: The name the peer sees (the file's own by default).
    /// - Returns: The transfer's summary (its id names it in ``cancelFile(_:)``).
    /// - Throws: ``ChatError/wrongState`` before the channel is up or on a v1 session,
    ///   ``ChatError/closed`` after the session ended, ``ChatError/file`` when the file
    ///   cannot be read.
    @discardableResult
    public func sendFile(_ path: URL, name: String? = nil) async throws(ChatError) -> FileTransferSummary {
        guard state != .closed else { throw .closed }
        guard machine?.security?.version == .v2 else { throw ChatError(.wrongState, "files need a verified v2 session") }
        let file: OutgoingFile
        do {
            file = try OutgoingFile(path: path.standardizedFileURL, name: name, chunkSize: FileChunkFrame.chatChunkSize)
        } catch {
            throw ChatError(.file, error.code == .io ? "cannot read \(path.lastPathComponent)" : "\(error)")
        }
        outgoingFiles[file.offer.id] = file
        persist(
            ChatOutgoingFileRecord(offer: Data(file.offer.encoded()), path: path.standardizedFileURL.path),
            kind: Self.outgoingFileKind, id: file.offer.id)
        await runFiles(.offered(file.offer))
        return FileTransferMachine.summary(file.offer, sending: true)
    }

    /// Accepts the peer's offer whose id starts with `prefix` (the only one when `nil`):
    /// the file is received into ``Configuration/downloads``.
    ///
    /// - Throws: ``ChatError/wrongState`` when no such offer waits,
    ///   ``ChatError/file`` when the downloads folder cannot be written.
    public func acceptFile(_ prefix: String? = nil) async throws(ChatError) {
        guard let offer = files.pendingOffer(prefix) else { throw ChatError(.wrongState, "no such file offer") }
        guard let downloads = configuration.downloads else { throw ChatError(.file, "no downloads folder") }
        let file: IncomingFile
        do {
            file = try IncomingFile(offer: offer, downloads: downloads)
        } catch {
            throw ChatError(.file, "cannot write into the downloads folder")
        }
        incomingFiles[offer.id] = file
        await runFiles(.accepted(offer.id, held: file.heldChunks))
    }

    /// Refuses the peer's offer whose id starts with `prefix` (the only one when `nil`).
    ///
    /// - Throws: ``ChatError/wrongState`` when no such offer waits.
    public func refuseFile(_ prefix: String? = nil) async throws(ChatError) {
        guard let offer = files.pendingOffer(prefix) else { throw ChatError(.wrongState, "no such file offer") }
        await runFiles(.refused(offer.id))
    }

    /// Stops the transfer (either direction, or a waiting offer) whose id starts with
    /// `prefix` (the only one when `nil`); the peer is told and a partial download deleted.
    ///
    /// - Throws: ``ChatError/wrongState`` when no single transfer matches.
    public func cancelFile(_ prefix: String? = nil) async throws(ChatError) {
        guard let id = files.transfer(prefix) else { throw ChatError(.wrongState, "no such transfer") }
        await runFiles(.cancelled(id))
    }

    /// The transfers under way.
    public var fileTransfers: [FileTransferSummary] { files.transfers }

    /// The offers waiting for an answer.
    public var pendingFileOffers: [FileTransferSummary] {
        files.pending.map { FileTransferMachine.summary($0, sending: false) }
    }

    // MARK: Driving the file machine

    /// Feeds the file machine and carries out its actions.
    func runFiles(_ input: FileTransferMachine.Input) async {
        let actions = files.handle(input, at: clock.now)
        await performFiles(actions)
    }

    private func performFiles(_ actions: [FileTransferMachine.Action]) async {
        for action in actions {
            switch action {
            case .send(let control):
                await sendFileControl(control)
            case .sendChunks(let id, let range, let generation):
                sendChunks(id, range, generation: generation)
            case .sendDigest(let id):
                guard let file = outgoingFiles[id] else { break }
                do {
                    await sendFileControl(.digest(id, sha256: try file.completeDigest()))
                } catch {
                    await runFiles(.readFailed(id))
                }
            case .finish(let id, let sha256):
                guard let file = incomingFiles[id] else { break }
                let path = try? file.finish(expecting: sha256)
                await runFiles(.finished(id, path: path?.path, sha256: sha256))
            case .persistIncoming(let offer, let digest):
                persist(
                    ChatIncomingFileRecord(offer: Data(offer.encoded()), digest: digest.map { Data($0) }),
                    kind: Self.incomingFileKind, id: offer.id)
            case .close(let id, let discard):
                if discard { incomingFiles[id]?.discard() }
                incomingFiles[id] = nil
                outgoingFiles[id] = nil
                forgetFileRecords(id)
            case .emit(let event):
                continuation.yield(.file(event))
            case .arm(let deadline):
                fileTimerGeneration += 1
                let generation = fileTimerGeneration
                let clock = clock
                spawn { [weak self] in
                    do { try await clock.sleep(until: deadline, tolerance: nil) } catch { return }
                    await self?.fileTimerFired(generation)
                }
            }
        }
    }

    private func fileTimerFired(_ generation: UInt64) async {
        guard generation == fileTimerGeneration, state != .closed else { return }
        await runFiles(.timerFired)
    }

    /// Sends a control message as a session message.
    private func sendFileControl(_ control: FileControl) async {
        guard machine != nil else { return }
        let time = now
        guard let actions = try? step({ machine throws(ChatError) in try machine.send(.file(control), at: time).actions }) else {
            return
        }
        await perform(actions)
    }

    /// Reads and seals a batch and queues it on the path messages travel on.
    private func sendChunks(_ id: FileTransferID, _ range: Range<UInt64>, generation: Int) {
        guard let file = outgoingFiles[id], let path = machine?.sendPath, paths[path] != nil else { return }
        var frames: [[UInt8]] = []
        frames.reserveCapacity(range.count)
        for index in range {
            do {
                frames.append(FileChunkFrame(transfer: id, index: index, sealed: try file.sealedChunk(index)).encoded())
            } catch {
                spawn { [weak self] in await self?.runFiles(.readFailed(id)) }
                return
            }
        }
        paths[path]!.chunks.append(ChunkBatch(transfer: id, generation: generation, frames: frames))
        paths[path]!.doorbell.yield()
    }

    /// A chunk frame arrived.
    func receivedChunk(_ frame: [UInt8]) async {
        guard let chunk = try? FileChunkFrame(decoding: frame), let file = incomingFiles[chunk.transfer] else { return }
        // In order on one path: an earlier index was sent twice, a later one means a gap.
        if chunk.index < file.heldChunks { return }
        if chunk.index > file.heldChunks { return await runFiles(.chunkGap(chunk.transfer)) }
        do {
            try file.write(chunk.sealed, index: chunk.index)
        } catch where error.code == .io {
            return await runFiles(.chunkRefused(chunk.transfer, reason: "the downloads folder cannot be written"))
        } catch {
            // Forged or damaged (whoever can inject a frame on the path could also drop
            // it): dropped like a lost chunk, and asked for again after the stall.
            return
        }
        await runFiles(.chunkStored(chunk.transfer, held: file.heldChunks))
    }

    /// A batch of chunk frames was written (or not).
    func chunkBatchEnded(_ batch: ChunkBatch, failed: Bool) async {
        await runFiles(
            failed
                ? .batchFailed(batch.transfer, generation: batch.generation)
                : .batchWritten(batch.transfer, generation: batch.generation))
    }

    /// Routes what the session machine reports that concerns files: their control
    /// messages (not shown as messages), path changes and the session coming back.
    /// Returns whether `event` was consumed.
    func fileEvent(_ event: ChatEvent) async -> Bool {
        switch event {
        case .message(_, .file(let control)):
            await runFiles(.control(control))
            return true
        case .path(let path):
            await runFiles(.pathChanged(direct: path == .direct))
        case .peer(online: true), .state(.active):
            await runFiles(.resync)
        default:
            break
        }
        return false
    }

    // MARK: Restarts

    /// Reopens the transfers a resumed session had under way.
    func restoreFiles() async {
        guard let store, let sessionID else { return }
        let prefix = sessionID + "/"
        let outgoing = (try? store.nearbyRecords(kind: Self.outgoingFileKind)) ?? []
        for record in outgoing where record.id.hasPrefix(prefix) {
            guard let value = try? JSONDecoder().decode(ChatOutgoingFileRecord.self, from: record.value),
                let offer = try? FileOffer(decoding: Array(value.offer))
            else { continue }
            guard let file = try? OutgoingFile(path: URL(fileURLWithPath: value.path), resuming: offer) else {
                // Gone or changed: the receiver's next request is answered with a cancel.
                forgetFileRecords(offer.id)
                continue
            }
            outgoingFiles[offer.id] = file
            await runFiles(.restoredOutgoing(offer))
        }
        let incoming = (try? store.nearbyRecords(kind: Self.incomingFileKind)) ?? []
        for record in incoming where record.id.hasPrefix(prefix) {
            guard let value = try? JSONDecoder().decode(ChatIncomingFileRecord.self, from: record.value),
                let offer = try? FileOffer(decoding: Array(value.offer)), let downloads = configuration.downloads,
                let file = try? IncomingFile(offer: offer, downloads: downloads)
            else { continue }
            incomingFiles[offer.id] = file
            await runFiles(.restoredIncoming(offer, held: file.heldChunks, digest: value.digest.map { Array($0) }))
        }
    }

    private func persist(_ value: some Encodable, kind: String, id: FileTransferID) {
        guard let store, let sessionID, let encoded = try? JSONEncoder().encode(value) else { return }
        let record = NearbyStoredRecord(
            kind: kind, id: "\(sessionID)/\(id)", updatedAt: Int64(clock.wallClock.timeIntervalSince1970 * 1_000),
            value: encoded)
        do {
            try store.saveNearby(records: [record])
        } catch {
            continuation.yield(.error(ChatError(.storage, error.description)))
        }
    }

    private func forgetFileRecords(_ id: FileTransferID) {
        guard let store, let sessionID else { return }
        try? store.saveNearby(
            records: [], deleting: [(Self.outgoingFileKind, "\(sessionID)/\(id)"), (Self.incomingFileKind, "\(sessionID)/\(id)")])
    }
}
