import Foundation
import InvisoCrypto
import InvisoKit
import InvisoStore
import InvisoTime
import NIOCore

/// A file being sent.
struct OutgoingTransfer {
    let file: OutgoingFile
    let peerKey: String
    /// The next chunk to send.
    var nextChunk: UInt64 = 0
    /// Batches written and not yet confirmed by the socket.
    var inFlight = 0
    /// The connection the receiver asked on (chunks go only there).
    var link: ObjectIdentifier?
    /// Chunks sent since the last progress report.
    var sinceReport: UInt64 = 0
    /// Whether the SHA-256 went out (once: the conversation delivers it from then on).
    var digestSent = false
}

/// A file being received.
struct IncomingTransfer {
    let file: IncomingFile
    let peerKey: String
    /// The sender's SHA-256, once it arrived.
    var digest: [UInt8]?
}

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

/// Files (`docs/nearby.md`, "Files"): the offer, the answer, the digest and the completion
/// travel as reliable payloads; the receiver asks for chunks from what it holds (again
/// after every reconnect), and the sender streams them in chunk frames beside the channel,
/// in batches, two batches in flight, so the socket is never idle and never holds more
/// than a few MiB. The sender hashes as it seals and sends the SHA-256 after the last
/// chunk; the receiver hashes as it writes and checks it at the end.
extension NearbyNode {
    /// Chunks per batch.
    static let chunksPerBatch: UInt64 = 16
    /// Batches written and not yet confirmed.
    static let batchesInFlight = 2

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
            outgoing[file.offer.id] = OutgoingTransfer(file: file, peerKey: key)
            saveOutgoing(file.offer, path: absolute.path, peer: key)
            enqueuePayload(.fileOffer(file.offer), to: key)
            emit(.fileProgress(
                peer: peers[key]?.record.name ?? "?", id: file.offer.id.description, bytes: 0, total: file.offer.size, sending: true))
        }
    }

    /// Accepts the offer whose id starts with `id` (or the only pending one).
    public func acceptFile(_ id: String?) {
        guard let transfer = pendingOffer(id), let pending = offers.removeValue(forKey: transfer) else {
            return emit(.error("no file offer to accept"))
        }
        startReceiving(pending.offer, from: pending.peerKey)
    }

    /// Refuses the offer whose id starts with `id` (or the only pending one).
    public func rejectFile(_ id: String?) {
        guard let transfer = pendingOffer(id), let pending = offers.removeValue(forKey: transfer) else {
            return emit(.error("no file offer to refuse"))
        }
        enqueuePayload(.fileAnswer(transfer, accepted: false), to: pending.peerKey)
    }

    /// Stops the transfer whose id starts with `id` (or the only one), either way: the
    /// other side is told, and a partial download is deleted.
    public func cancelFile(_ id: String?) {
        let all = Array(outgoing.keys) + Array(incoming.keys)
        let matches = all.filter { id == nil || $0.description.hasPrefix(id!.lowercased()) }
        guard matches.count == 1, let transfer = matches.first else {
            return emit(.error(all.isEmpty ? "no transfer to cancel" : "which transfer? (/cancel ID)"))
        }
        let key = outgoing[transfer]?.peerKey ?? incoming[transfer]?.peerKey ?? ""
        stopTransfer(transfer)
        enqueuePayload(.fileCancel(transfer), to: key)
        emit(.fileCancelled(peer: peers[key]?.record.name ?? "?", id: transfer.description, byPeer: false))
    }

    /// Whether a file offer waits for the user.
    public var hasPendingOffer: Bool { !offers.isEmpty }

    // MARK: - Records and payloads

    /// Handles a file record from `key` on link `id`; returns whether it was one.
    func fileRecord(_ record: NearbyRecord, from key: String, on id: ObjectIdentifier) -> Bool {
        guard case .fileRequest(let transfer, let from) = record else { return false }
        guard var sending = outgoing[transfer] else {
            // Not ours (any more): a file gone since a restart, a transfer cancelled. Tell
            // the receiver, so it stops asking.
            if incoming[transfer] == nil { enqueuePayload(.fileCancel(transfer), to: key) }
            return true
        }
        guard sending.peerKey == key, from <= sending.file.offer.chunkCount else { return true }
        sending.link = id
        sending.nextChunk = from
        sending.inFlight = 0
        outgoing[transfer] = sending
        pump(transfer)
        return true
    }

    /// Handles a chunk frame from `key` on link `id`.
    func fileChunk(_ chunk: NearbyChunk, from key: String, on id: ObjectIdentifier) {
        guard let receiving = incoming[chunk.transfer], receiving.peerKey == key else { return }
        let file = receiving.file
        // On one connection the sender streams from the chunk asked for, in order: an
        // earlier index is one sent again after a second request, a later one is a gap.
        guard chunk.index >= file.heldChunks else { return }
        do {
            try file.write(chunk.sealed, index: chunk.index)
        } catch {
            emit(.error("a file chunk from \(peers[key]?.record.name ?? "?") was refused (\(error.code)); connection closed"))
            run(id) { $0.reject() }
            return
        }
        if file.isComplete {
            if let digest = receiving.digest {
                finishReceiving(chunk.transfer, digest: digest)
            } else {
                emit(.fileProgress(
                    peer: peers[key]?.record.name ?? "?", id: chunk.transfer.description, bytes: file.heldBytes,
                    total: file.offer.size, sending: false))
            }
        } else if file.heldChunks % 16 == 0 {
            emit(.fileProgress(
                peer: peers[key]?.record.name ?? "?", id: chunk.transfer.description, bytes: file.heldBytes,
                total: file.offer.size, sending: false))
        }
    }

    /// Handles a file payload delivered in order by the conversation with `key`.
    func filePayload(_ payload: NearbyPayload, from key: String) {
        guard let peer = peers[key] else { return }
        switch payload {
        case .fileOffer(let offer):
            guard incoming[offer.id] == nil, offers[offer.id] == nil else { return }
            if peer.record.verified, offer.size <= configuration.autoAcceptBytes {
                startReceiving(offer, from: key)
            } else {
                offers[offer.id] = (offer, key)
                emit(.fileOffer(from: peer.record.name, id: offer.id.description, name: SafeFileName.sanitize(offer.name), size: offer.size))
            }
        case .fileAnswer(let transfer, let accepted):
            guard !accepted, let sending = outgoing[transfer], sending.peerKey == key else { return }
            stopTransfer(transfer)
            emit(.fileRefused(by: peer.record.name, id: transfer.description))
        case .fileComplete(let transfer, let verified):
            guard let sending = outgoing[transfer], sending.peerKey == key else { return }
            stopTransfer(transfer)
            emit(.fileSent(to: peer.record.name, id: transfer.description, verified: verified))
        case .fileCancel(let transfer):
            let ours = outgoing[transfer]?.peerKey == key || incoming[transfer]?.peerKey == key || offers[transfer]?.peerKey == key
            guard ours else { return }
            stopTransfer(transfer)
            emit(.fileCancelled(peer: peer.record.name, id: transfer.description, byPeer: true))
        case .fileDigest(let transfer, let sha256):
            guard var receiving = incoming[transfer], receiving.peerKey == key, receiving.digest == nil else { return }
            receiving.digest = sha256
            incoming[transfer] = receiving
            saveIncoming(receiving.file.offer, peer: key, digest: sha256)
            if receiving.file.isComplete { finishReceiving(transfer, digest: sha256) }
        default:
            break
        }
    }

    /// After a (re)connection: ask for what is missing of every file from `key` (the
    /// digest included), and finish what a restart left complete.
    func resumeTransfers(with key: String) {
        for (transfer, receiving) in incoming where receiving.peerKey == key {
            if receiving.file.isComplete, let digest = receiving.digest {
                finishReceiving(transfer, digest: digest)
            } else {
                transmit([.fileRequest(transfer, fromChunk: receiving.file.heldChunks)], to: key)
            }
        }
    }

    /// A batch left the socket: send more.
    func chunksWritten(_ transfer: FileTransferID, on link: ObjectIdentifier) {
        guard var sending = outgoing[transfer], sending.link == link else { return }
        sending.inFlight = max(0, sending.inFlight - 1)
        outgoing[transfer] = sending
        pump(transfer)
    }

    // MARK: - Sending and receiving

    /// Writes batches of chunk frames until two are in flight; after the last chunk, the
    /// SHA-256 (hashed while sealing) goes over the conversation.
    private func pump(_ transfer: FileTransferID) {
        guard var sending = outgoing[transfer], let linkID = sending.link, peers[sending.peerKey]?.link == linkID,
            let link = links[linkID], link.machine.phase == .open
        else { return }
        let offer = sending.file.offer
        while sending.inFlight < Self.batchesInFlight, sending.nextChunk < offer.chunkCount {
            let end = min(sending.nextChunk + Self.chunksPerBatch, offer.chunkCount)
            var buffer = link.channel.allocator.buffer(
                capacity: Int(end - sending.nextChunk) * (Int(offer.chunkSize) + NearbyFrameDecoder.chunkHeaderBytes + FileChunkCipher.overhead))
            for index in sending.nextChunk..<end {
                let sealed: [UInt8]
                do {
                    sealed = try sending.file.sealedChunk(index)
                } catch {
                    stopTransfer(transfer)
                    enqueuePayload(.fileCancel(transfer), to: sending.peerKey)
                    return emit(.error("sending \(offer.name) stopped: the file changed or cannot be read"))
                }
                buffer.writeBytes(NearbyFrameDecoder.chunkHeader(transfer: transfer, index: index, sealedCount: sealed.count))
                buffer.writeBytes(sealed)
            }
            sending.sinceReport += end - sending.nextChunk
            sending.nextChunk = end
            sending.inFlight += 1
            let promise = link.channel.eventLoop.makePromise(of: Void.self)
            let sink = inputContinuation
            promise.futureResult.whenComplete { _ in sink.yield(.chunksWritten(transfer, linkID)) }
            link.channel.writeAndFlush(buffer, promise: promise)
            if sending.sinceReport >= 16 || end == offer.chunkCount {
                sending.sinceReport = 0
                let sent = min(end * UInt64(offer.chunkSize), offer.size)
                emit(.fileProgress(
                    peer: peers[sending.peerKey]?.record.name ?? "?", id: transfer.description, bytes: sent, total: offer.size,
                    sending: true))
            }
        }
        guard sending.nextChunk == offer.chunkCount, !sending.digestSent else {
            outgoing[transfer] = sending
            return
        }
        let digest: [UInt8]
        do {
            digest = try sending.file.completeDigest()
        } catch {
            stopTransfer(transfer)
            enqueuePayload(.fileCancel(transfer), to: sending.peerKey)
            return emit(.error("sending \(offer.name) stopped: the file changed or cannot be read"))
        }
        sending.digestSent = true
        outgoing[transfer] = sending
        enqueuePayload(.fileDigest(transfer, sha256: digest), to: sending.peerKey)
    }

    private func startReceiving(_ offer: FileOffer, from key: String) {
        let file: IncomingFile
        do {
            file = try IncomingFile(offer: offer, downloads: configuration.downloads)
        } catch {
            emit(.error("cannot write into \(configuration.downloads.path): \(error)"))
            enqueuePayload(.fileAnswer(offer.id, accepted: false), to: key)
            return
        }
        incoming[offer.id] = IncomingTransfer(file: file, peerKey: key)
        saveIncoming(offer, peer: key, digest: nil)
        enqueuePayload(.fileAnswer(offer.id, accepted: true), to: key)
        transmit([.fileRequest(offer.id, fromChunk: file.heldChunks)], to: key)
    }

    /// Forgets a transfer in any direction, with what the store keeps of it (a partial
    /// download is deleted).
    private func stopTransfer(_ transfer: FileTransferID) {
        if outgoing.removeValue(forKey: transfer) != nil { forget(kind: "transfer-out", id: transfer.description) }
        if let receiving = incoming.removeValue(forKey: transfer) {
            receiving.file.discard()
            forgetIncoming(transfer)
        }
        offers[transfer] = nil
    }

    private func finishReceiving(_ transfer: FileTransferID, digest: [UInt8]) {
        guard let receiving = incoming.removeValue(forKey: transfer) else { return }
        let key = receiving.peerKey
        let name = peers[key]?.record.name ?? "?"
        let offer = receiving.file.offer
        forgetIncoming(transfer)
        do {
            let path = try receiving.file.finish(expecting: digest)
            emit(.fileProgress(peer: name, id: transfer.description, bytes: offer.size, total: offer.size, sending: false))
            emit(.fileReceived(from: name, id: transfer.description, path: path.path, sha256: Hex.encode(digest)))
            enqueuePayload(.fileComplete(transfer, verified: true), to: key)
        } catch {
            emit(.error("\(offer.name) from \(name) was discarded: \(error.code == .hashMismatch ? "its SHA-256 does not match" : "\(error)")"))
            enqueuePayload(.fileComplete(transfer, verified: false), to: key)
        }
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

    private func pendingOffer(_ prefix: String?) -> FileTransferID? {
        guard let prefix else { return offers.count == 1 ? offers.keys.first : nil }
        let matches = offers.keys.filter { $0.description.hasPrefix(prefix.lowercased()) }
        return matches.count == 1 ? matches[0] : nil
    }

    private func saveIncoming(_ offer: FileOffer, peer: String, digest: [UInt8]?) {
        persist(
            IncomingTransferRecord(offer: Data(offer.encoded()), peer: peer, digest: digest.map { Data($0) }),
            kind: "transfer-in", id: offer.id.description)
    }

    private func saveOutgoing(_ offer: FileOffer, path: String, peer: String) {
        persist(OutgoingTransferRecord(offer: Data(offer.encoded()), path: path, peer: peer), kind: "transfer-out", id: offer.id.description)
    }

    private func forgetIncoming(_ transfer: FileTransferID) {
        forget(kind: "transfer-in", id: transfer.description)
    }
}
