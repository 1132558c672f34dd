import Crypto
public import Foundation
import InvisoCrypto

/// The receiving end of one transfer, on disk: chunks are opened, hashed and appended in
/// order to `DOWNLOADS/.inviso-partial/ID.part`; a transfer that breaks resumes from the
/// chunks already held (even after a restart: the partial file is the state, and the
/// bytes it holds are hashed once when it is reopened); at the end the SHA-256 the sender
/// sent is checked against the running hash and the file moves to a fresh name inside the
/// downloads folder.
///
/// The sender's name is used only through ``SafeFileName``; the final file is created with
/// `O_CREAT | O_EXCL | O_NOFOLLOW`, so neither a hostile name nor a symlink planted in the
/// folder can make it write anywhere else or overwrite anything.
public final class IncomingFile {
    /// The offer being received.
    public let offer: FileOffer
    /// Chunks held (the next index expected).
    public private(set) var heldChunks: UInt64
    private let partial: URL
    private let downloads: URL
    private let cipher: FileChunkCipher
    private let handle: FileHandle
    /// Hashes on a thread of its own, beside the opening and writing.
    private let hasher = FileHasher()

    /// Opens (or resumes) the partial file of `offer` under `downloads`.
    ///
    /// - Throws: ``FileTransferError/Code/io`` when the folder or file cannot be used.
    public init(offer: FileOffer, downloads: URL) throws(FileTransferError) {
        self.offer = offer
        self.downloads = downloads
        cipher = FileChunkCipher(offer: offer)
        let folder = downloads.appendingPathComponent(".inviso-partial", isDirectory: true)
        partial = folder.appendingPathComponent("\(offer.id).part")
        do {
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let fd = open(partial.path, O_RDWR | O_CREAT | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw FileTransferError(.io, "open the partial file") }
            handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
            let length = try handle.seekToEnd()
            // Whole chunks only: a chunk cut by a crash is fetched again.
            heldChunks = min(length / UInt64(offer.chunkSize), offer.chunkCount)
            let kept = heldChunks == offer.chunkCount ? offer.size : heldChunks * UInt64(offer.chunkSize)
            try handle.truncate(atOffset: kept)
            if kept > 0 {
                try handle.seek(toOffset: 0)
                var left = kept
                while left > 0, let block = try handle.read(upToCount: Int(min(left, 1 << 20))), !block.isEmpty {
                    hasher.update(block)
                    left -= UInt64(block.count)
                }
                guard left == 0 else { throw FileTransferError(.io, "read the partial file") }
                try handle.seekToEnd()
            }
        } catch let error as FileTransferError {
            throw error
        } catch {
            throw FileTransferError(.io, "open the partial file")
        }
    }

    /// Bytes held so far.
    public var heldBytes: UInt64 { min(heldChunks * UInt64(offer.chunkSize), offer.size) }
    /// Whether every chunk is in.
    public var isComplete: Bool { heldChunks == offer.chunkCount }

    /// Opens chunk `index`, appends it and adds it to the hash.
    ///
    /// - Throws: ``FileTransferError/Code/outOfOrder`` unless `index` is the next chunk
    ///   (a duplicate after a resume included: nothing is written),
    ///   ``FileTransferError/Code/authenticationFailed`` when it does not open,
    ///   ``FileTransferError/Code/tooLarge`` when its length is not the expected one, and
    ///   ``FileTransferError/Code/io``. Nothing changes on a throw.
    public func write(_ sealed: [UInt8], index: UInt64) throws(FileTransferError) {
        guard index == heldChunks, index < offer.chunkCount else { throw FileTransferError(.outOfOrder, "file chunk") }
        let plaintext = try cipher.open(sealed, index: index)
        guard plaintext.count == offer.chunkLength(index) else { throw FileTransferError(.tooLarge, "file chunk length") }
        do {
            try handle.write(contentsOf: plaintext)
        } catch {
            // A short write must not shift the chunks that follow.
            try? handle.truncate(atOffset: heldBytes)
            throw FileTransferError(.io, "write the partial file")
        }
        hasher.update(plaintext)
        heldChunks += 1
    }

    /// Checks the hash of the bytes received against `sha256` (the sender's, sent after the
    /// last chunk) and moves the file into the downloads folder; returns its path.
    ///
    /// - Throws: ``FileTransferError/Code/hashMismatch`` (the partial file is deleted, so a
    ///   new attempt starts over), ``FileTransferError/Code/outOfOrder`` before the last
    ///   chunk, ``FileTransferError/Code/io``.
    public func finish(expecting sha256: [UInt8]) throws(FileTransferError) -> URL {
        guard isComplete else { throw FileTransferError(.outOfOrder, "file not complete") }
        guard ConstantTime.equals(hasher.finalize(), sha256) else {
            try? FileManager.default.removeItem(at: partial)
            throw FileTransferError(.hashMismatch, "file hash")
        }
        let name = SafeFileName.sanitize(offer.name)
        for n in 1...10_000 {
            let candidate = downloads.appendingPathComponent(n == 1 ? name : SafeFileName.numbered(name, n))
            let fd = open(candidate.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
            if fd < 0 {
                if errno == EEXIST { continue }
                throw FileTransferError(.io, "create the downloaded file")
            }
            close(fd)
            // rename(2) replaces the placeholder we just created; it never follows a link.
            guard rename(partial.path, candidate.path) == 0 else {
                unlink(candidate.path)
                throw FileTransferError(.io, "move the downloaded file")
            }
            return candidate
        }
        throw FileTransferError(.io, "no free file name")
    }

    /// Deletes the partial file (the user refused or cancelled).
    public func discard() {
        try? FileManager.default.removeItem(at: partial)
    }
}
