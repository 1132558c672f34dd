import Crypto
public import Foundation
public import InvisoCrypto

/// The sending end of one transfer: the file's size and SHA-256 (read once, up front), a
/// fresh random key, and chunks sealed on demand from any index (a resume starts wherever
/// the receiver says it stopped).
public final class OutgoingFile {
    /// The offer to send over the secure channel.
    public let offer: FileOffer
    private let cipher: FileChunkCipher
    private let handle: FileHandle

    /// Reads `path` to compute its size and hash, and makes an offer named `name` (by
    /// default the file's own name).
    ///
    /// - Throws: ``FileTransferError/Code/io`` when the file cannot be read,
    ///   ``FileTransferError/Code/malformed`` when it is over ``FileOffer/maxSize``.
    public init(path: URL, name: String? = nil, chunkSize: UInt32 = FileOffer.defaultChunkSize) throws(FileTransferError) {
        do {
            handle = try FileHandle(forReadingFrom: path)
            var hasher = SHA256()
            var size: UInt64 = 0
            while let block = try handle.read(upToCount: 1 << 20), !block.isEmpty {
                hasher.update(data: block)
                size += UInt64(block.count)
            }
            var generator = SystemRandomNumberGenerator()
            offer = try FileOffer(
                id: FileTransferID(), name: name ?? path.lastPathComponent, size: size, chunkSize: chunkSize,
                sha256: Array(hasher.finalize()), key: SecretBytes(randomCount: 32, using: &generator))
        } catch let error as FileTransferError {
            throw error
        } catch {
            throw FileTransferError(.io, "read the file to send")
        }
        cipher = FileChunkCipher(offer: offer)
    }

    /// Chunk `index` read from the file and sealed.
    ///
    /// - Throws: ``FileTransferError/Code/io`` when the file changed or cannot be read,
    ///   ``FileTransferError/Code/outOfOrder`` for an index past the end.
    public func sealedChunk(_ index: UInt64) throws(FileTransferError) -> [UInt8] {
        guard index < offer.chunkCount else { throw FileTransferError(.outOfOrder, "chunk index") }
        let length = offer.chunkLength(index)
        do {
            try handle.seek(toOffset: index * UInt64(offer.chunkSize))
            guard let data = try handle.read(upToCount: length), data.count == length else {
                throw FileTransferError(.io, "the file changed while being sent")
            }
            return cipher.seal(data, index: index)
        } catch let error as FileTransferError {
            throw error
        } catch {
            throw FileTransferError(.io, "read the file to send")
        }
    }
}
