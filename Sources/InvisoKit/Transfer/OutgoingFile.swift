import Crypto
public import Foundation
import InvisoCrypto

/// The sending end of one transfer: the file's size, a fresh random key, and chunks sealed
/// on demand from any index (a resume starts wherever the receiver says it stopped).
///
/// The file is read once: each chunk is hashed as it is first sealed (on a thread of its
/// own, ``FileHasher``), so the SHA-256 is ready when the last chunk leaves
/// (``completeDigest()``) and describes exactly the bytes that were sealed. A chunk sent
/// again after a resume is not hashed again; a resume that asks for chunks past those
/// hashed so far has the gap read and hashed first.
public final class OutgoingFile {
    /// The offer to send over the secure channel.
    public let offer: FileOffer
    private let cipher: FileChunkCipher
    private let handle: FileHandle
    private let hasher = FileHasher()
    private var hashedChunks: UInt64 = 0
    private var finalDigest: [UInt8]?

    /// SHA-256 of the file, once every chunk was hashed (at once for an empty file).
    public var digest: [UInt8]? {
        hashedChunks == offer.chunkCount ? try? completeDigest() : nil
    }

    /// Opens `path` and makes an offer named `name` (by default the file's own name).
    ///
    /// - Throws: ``FileTransferError/Code/io`` when the file cannot be read,
    ///   ``FileTransferError/Code/malformed`` when it is over ``FileOffer/maxSize``.
    public init(path: URL, name: String? = nil, chunkSize: UInt32 = FileOffer.defaultChunkSize) throws(FileTransferError) {
        do {
            handle = try FileHandle(forReadingFrom: path)
            let size = try handle.seekToEnd()
            var generator = SystemRandomNumberGenerator()
            offer = try FileOffer(
                id: FileTransferID(), name: name ?? path.lastPathComponent, size: size, chunkSize: chunkSize,
                key: SecretBytes(randomCount: 32, using: &generator))
        } catch let error as FileTransferError {
            throw error
        } catch {
            throw FileTransferError(.io, "read the file to send")
        }
        cipher = FileChunkCipher(offer: offer)
    }

    /// Reopens `path` for an offer made before (a sender that restarted resumes the
    /// transfer under the same key; the hash is rebuilt from the chunks it sends or skips).
    ///
    /// - Throws: ``FileTransferError/Code/io`` when the file cannot be read or its size is
    ///   no longer the offered one.
    public init(path: URL, resuming offer: FileOffer) throws(FileTransferError) {
        do {
            handle = try FileHandle(forReadingFrom: path)
            guard try handle.seekToEnd() == offer.size else { throw FileTransferError(.io, "the file changed since it was offered") }
        } catch let error as FileTransferError {
            throw error
        } catch {
            throw FileTransferError(.io, "read the file to send")
        }
        self.offer = offer
        cipher = FileChunkCipher(offer: offer)
    }

    /// Chunk `index` read from the file and sealed (hashed too when it is the next one not
    /// yet hashed).
    ///
    /// - Throws: ``FileTransferError/Code/io`` when the file changed or cannot be read,
    ///   ``FileTransferError/Code/outOfOrder`` for an index past the end.
    public func sealedChunk(_ index: UInt64) throws(FileTransferError) -> [UInt8] {
        guard index < offer.chunkCount else { throw FileTransferError(.outOfOrder, "chunk index") }
        while hashedChunks < index { hash(try read(hashedChunks)) }
        let plaintext = try read(index)
        if index == hashedChunks { hash(plaintext) }
        return cipher.seal(plaintext, index: index)
    }

    /// The SHA-256, reading and hashing whatever chunks were not hashed yet (a restarted
    /// sender asked only for the end of a file).
    ///
    /// - Throws: ``FileTransferError/Code/io`` when the file changed or cannot be read.
    public func completeDigest() throws(FileTransferError) -> [UInt8] {
        while hashedChunks < offer.chunkCount { hash(try read(hashedChunks)) }
        if let finalDigest { return finalDigest }
        let complete = hasher.finalize()
        finalDigest = complete
        return complete
    }

    private func hash(_ plaintext: Data) {
        hasher.update(plaintext)
        hashedChunks += 1
    }

    private func read(_ index: UInt64) throws(FileTransferError) -> Data {
        let length = offer.chunkLength(index)
        do {
            try handle.seek(toOffset: index * UInt64(offer.chunkSize))
            guard let data = try handle.read(upToCount: length), data.count == length else {
                throw FileTransferError(.io, "the file changed while being sent")
            }
            return data
        } catch let error as FileTransferError {
            throw error
        } catch {
            throw FileTransferError(.io, "read the file to send")
        }
    }
}
