import Crypto
import Foundation
import InvisoCrypto
@testable import InvisoKit
import Testing

@Suite struct FileTransferTests {
    /// A fresh folder under the temporary directory, removed by the caller.
    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("inviso-transfer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func file(in folder: URL, name: String, size: Int) throws -> (URL, [UInt8]) {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let url = folder.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return (url, bytes)
    }

    @Test(arguments: [0, 1, 65_535, 65_536, 65_537, 300_000])
    func sendsAndReceivesFilesOfEverySize(size: Int) throws {
        let root = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let (source, bytes) = try Self.file(in: root, name: "source.bin", size: size)
        let outgoing = try OutgoingFile(path: source)
        #expect(outgoing.offer.size == UInt64(size))
        #expect((outgoing.digest != nil) == (size == 0))
        let offer = try FileOffer(decoding: outgoing.offer.encoded())
        let downloads = root.appendingPathComponent("downloads")
        let incoming = try IncomingFile(offer: offer, downloads: downloads)
        for index in 0..<offer.chunkCount { try incoming.write(try outgoing.sealedChunk(index), index: index) }
        // The sender's hash is ready once the last chunk was sealed, and is the file's.
        let digest = try #require(outgoing.digest)
        #expect(digest == Array(SHA256.hash(data: bytes)))
        let path = try incoming.finish(expecting: digest)
        #expect(path.deletingLastPathComponent().standardizedFileURL.path == downloads.standardizedFileURL.path)
        #expect(path.lastPathComponent == "source.bin")
        #expect(try Data(contentsOf: path) == Data(bytes))
    }

    /// A transfer cut after some chunks resumes from the chunks on disk, even from a new
    /// process (a new IncomingFile over the same partial file), including a torn last write.
    @Test func resumesFromTheChunksHeld() throws {
        let root = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let (source, bytes) = try Self.file(in: root, name: "big.bin", size: 10 * 65_536 + 123)
        let outgoing = try OutgoingFile(path: source)
        let downloads = root.appendingPathComponent("downloads")
        do {
            let incoming = try IncomingFile(offer: outgoing.offer, downloads: downloads)
            for index in 0..<4 { try incoming.write(try outgoing.sealedChunk(UInt64(index)), index: UInt64(index)) }
        }
        // A torn write: half a chunk appended behind the transfer's back.
        let partial = downloads.appendingPathComponent(".inviso-partial/\(outgoing.offer.id).part")
        let handle = try FileHandle(forWritingTo: partial)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 0xEE, count: 30_000))
        try handle.close()

        let resumed = try IncomingFile(offer: outgoing.offer, downloads: downloads)
        #expect(resumed.heldChunks == 4 && resumed.heldBytes == 4 * 65_536)
        #expect(outgoing.digest == nil)
        // Duplicates and gaps are refused without a change.
        #expect(throws: FileTransferError.self) { try resumed.write(try outgoing.sealedChunk(3), index: 3) }
        #expect(throws: FileTransferError.self) { try resumed.write(try outgoing.sealedChunk(5), index: 5) }
        // A chunk sealed for another index does not open at this one.
        #expect(throws: FileTransferError.self) { try resumed.write(try outgoing.sealedChunk(5), index: 4) }
        #expect(resumed.heldChunks == 4)
        for index in 4..<outgoing.offer.chunkCount { try resumed.write(try outgoing.sealedChunk(index), index: index) }
        // The reopened file hashed the chunks it held; the sender hashed each chunk once,
        // although chunks 3 and 5 were sealed twice.
        let path = try resumed.finish(expecting: try #require(outgoing.digest))
        #expect(try Data(contentsOf: path) == Data(bytes))
        #expect(outgoing.digest == Array(SHA256.hash(data: bytes)))
    }

    /// A sender asked to resume past the chunks it hashed (a receiver that held them from
    /// an earlier run) reads and hashes the gap first; its digest is still the file's.
    @Test func aSenderAskedPastWhatItHashedHashesTheGap() throws {
        let root = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let (source, bytes) = try Self.file(in: root, name: "gap.bin", size: 5 * 1_024 + 7)
        let outgoing = try OutgoingFile(path: source, chunkSize: 1_024)
        _ = try outgoing.sealedChunk(4)
        #expect(outgoing.digest == nil)
        _ = try outgoing.sealedChunk(5)
        #expect(outgoing.digest == Array(SHA256.hash(data: bytes)))
        #expect(throws: FileTransferError.self) { try outgoing.sealedChunk(6) }
    }

    /// A sender that restarted reopens the file under the offer it made: the same chunks
    /// open at the receiver, and the digest covers the chunks it only skipped; a file whose
    /// size changed is refused.
    @Test func aRestartedSenderResumesUnderItsOffer() throws {
        let root = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let (source, bytes) = try Self.file(in: root, name: "r.bin", size: 4 * 1_024 + 9)
        let first = try OutgoingFile(path: source, chunkSize: 1_024)
        let incoming = try IncomingFile(offer: first.offer, downloads: root.appendingPathComponent("d"))
        for index in 0..<UInt64(2) { try incoming.write(try first.sealedChunk(index), index: index) }
        let again = try OutgoingFile(path: source, resuming: first.offer)
        for index in 2..<first.offer.chunkCount { try incoming.write(try again.sealedChunk(index), index: index) }
        #expect(again.digest == Array(SHA256.hash(data: bytes)))
        _ = try incoming.finish(expecting: try #require(again.digest))
        // Asked for nothing (the receiver held every chunk): the digest is still there.
        let idle = try OutgoingFile(path: source, resuming: first.offer)
        #expect(try idle.completeDigest() == Array(SHA256.hash(data: bytes)))
        try Data(bytes + [1]).write(to: source)
        #expect(throws: FileTransferError.self) { try OutgoingFile(path: source, resuming: first.offer) }
    }

    /// A file that changes while it is sent: the chunk read again after the change carries
    /// other bytes than the ones hashed, so the receiver's check fails.
    @Test func aFileChangedDuringTheTransferFailsTheHash() throws {
        let root = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let (source, _) = try Self.file(in: root, name: "moving.bin", size: 3 * 1_024)
        let outgoing = try OutgoingFile(path: source, chunkSize: 1_024)
        let downloads = root.appendingPathComponent("d")
        let incoming = try IncomingFile(offer: outgoing.offer, downloads: downloads)
        for index in 0..<UInt64(3) { _ = try outgoing.sealedChunk(index) }
        let handle = try FileHandle(forWritingTo: source)
        try handle.write(contentsOf: Data(repeating: 0x41, count: 10))
        try handle.close()
        for index in 0..<UInt64(3) { try incoming.write(try outgoing.sealedChunk(index), index: index) }
        #expect(throws: FileTransferError.self) { _ = try incoming.finish(expecting: try #require(outgoing.digest)) }
    }

    @Test func everyFlippedByteOfAChunkIsRefused() throws {
        let root = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let (source, _) = try Self.file(in: root, name: "s", size: 2_000)
        let outgoing = try OutgoingFile(path: source, chunkSize: 1_024)
        let cipher = FileChunkCipher(offer: outgoing.offer)
        let sealed = try outgoing.sealedChunk(1)
        for index in sealed.indices {
            var tampered = sealed
            tampered[index] ^= 0x20
            #expect(throws: FileTransferError.self) { try cipher.open(tampered, index: 1) }
        }
        // Another transfer's key does not open it either.
        let other = try OutgoingFile(path: source, chunkSize: 1_024)
        #expect(throws: FileTransferError.self) { try FileChunkCipher(offer: other.offer).open(sealed, index: 1) }
    }

    @Test func aWrongHashDeletesThePartialFile() throws {
        let root = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let (source, _) = try Self.file(in: root, name: "s", size: 5_000)
        let outgoing = try OutgoingFile(path: source)
        let downloads = root.appendingPathComponent("d")
        let incoming = try IncomingFile(offer: outgoing.offer, downloads: downloads)
        try incoming.write(try outgoing.sealedChunk(0), index: 0)
        var lying = try #require(outgoing.digest)
        lying[31] ^= 1
        #expect(throws: FileTransferError.self) { _ = try incoming.finish(expecting: lying) }
        let left = try FileManager.default.contentsOfDirectory(atPath: downloads.appendingPathComponent(".inviso-partial").path)
        #expect(left.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path) == [".inviso-partial"])
    }

    /// Hostile names land inside the downloads folder under a plain name; an existing file
    /// and a planted symlink are never written through.
    @Test func hostileNamesStayInsideTheDownloadsFolder() throws {
        let root = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let downloads = root.appendingPathComponent("downloads")
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        let outside = root.appendingPathComponent("outside.txt")
        try Data("keep".utf8).write(to: outside)
        try FileManager.default.createSymbolicLink(at: downloads.appendingPathComponent("x"), withDestinationURL: outside)
        try Data("mine".utf8).write(to: downloads.appendingPathComponent("notes.txt"))

        let names = ["../../x", "/etc/passwd", "..", ".", "", "..\\..\\win.ini", "x", "notes.txt", ".bashrc",
                     "evil\u{202E}gpj.exe", "a\u{0}b\nc", String(repeating: "é", count: 300) + ".txt"]
        var landed: [String] = []
        for name in names {
            let (source, bytes) = try Self.file(in: root, name: "payload", size: 10)
            let outgoing = try OutgoingFile(path: source, name: name)
            let incoming = try IncomingFile(offer: try FileOffer(decoding: outgoing.offer.encoded()), downloads: downloads)
            try incoming.write(try outgoing.sealedChunk(0), index: 0)
            let path = try incoming.finish(expecting: try #require(outgoing.digest))
            #expect(path.deletingLastPathComponent().standardizedFileURL.path == downloads.standardizedFileURL.path)
            #expect(try Data(contentsOf: path) == Data(bytes))
            #expect(path.lastPathComponent.utf8.count <= SafeFileName.maxBytes + 8)
            landed.append(path.lastPathComponent)
        }
        #expect(try String(contentsOf: outside, encoding: .utf8) == "keep")
        #expect(try String(contentsOf: downloads.appendingPathComponent("notes.txt"), encoding: .utf8) == "mine")
        #expect(landed[0] == "x (2)" && landed[1] == "passwd" && landed[2] == "file" && landed[5] == "win.ini")
        #expect(landed[7] == "notes (2).txt" && landed[8] == "bashrc" && landed[9] == "evilgpj.exe" && landed[10] == "abc")
        #expect(landed[11].hasSuffix(".txt"))
        #expect(Set(landed).count == landed.count)
    }

    @Test func offerCodecRefusesBadFields() throws {
        let offer = try FileOffer(id: FileTransferID(), name: "n", size: 1, key: SecretBytes([UInt8](repeating: 2, count: 32)))
        let bytes = offer.encoded()
        #expect(try FileOffer(decoding: bytes) == offer)
        for end in 0..<bytes.count { #expect(throws: FileTransferError.self) { try FileOffer(decoding: Array(bytes[..<end])) } }
        #expect(throws: FileTransferError.self) { try FileOffer(decoding: bytes + [0]) }
        var hugeChunk = bytes
        hugeChunk[24] = 0xFF
        #expect(throws: FileTransferError.self) { try FileOffer(decoding: hugeChunk) }
        #expect(throws: FileTransferError.self) {
            try FileOffer(id: FileTransferID(), name: "n", size: FileOffer.maxSize + 1, key: SecretBytes([UInt8](repeating: 2, count: 32)))
        }
    }
}

/// The background hash: in order, whatever the block sizes, past its backlog bound.
@Suite("FileHasher")
struct FileHasherTests {
    @Test("the digest is the SHA-256 of the blocks in order, also past the backlog and for nothing at all")
    func digestOfTheBlocks() {
        #expect(FileHasher().finalize() == Array(SHA256.hash(data: Data())))
        var generator = SystemRandomNumberGenerator()
        let hasher = FileHasher()
        var all = Data()
        // 40 MiB in blocks of varied sizes: more than the backlog, so feeding waits.
        while all.count < 40 << 20 {
            let count = Int.random(in: 0...(3 << 20), using: &generator)
            // Each block its own byte: blocks hashed out of order would give another digest.
            let block = Data(repeating: UInt8.random(in: 0...255, using: &generator), count: count)
            hasher.update(block)
            all.append(block)
        }
        #expect(hasher.finalize() == Array(SHA256.hash(data: all)))
    }
}
