public import InvisoCrypto

/// A transfer's 16 random bytes, chosen by the sender.
public struct FileTransferID: Sendable, Hashable, CustomStringConvertible {
    /// The bytes.
    public let bytes: [UInt8]

    /// A random id.
    public init() {
        var generator = SystemRandomNumberGenerator()
        bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// An id from its 16 bytes.
    ///
    /// - Throws: ``FileTransferError/Code/malformed`` unless 16 bytes.
    public init(_ bytes: [UInt8]) throws(FileTransferError) {
        guard bytes.count == 16 else { throw FileTransferError(.malformed, "transfer id") }
        self.bytes = bytes
    }

    /// 32 lowercase hex digits.
    public var description: String { Hex.encode(bytes) }
}

/// What the sender tells the receiver about a file, over the already secured channel:
/// name, size and the fresh key its chunks are sealed with. The file's SHA-256 follows the
/// last chunk (the sender hashes the bytes as it seals them, so it never reads the file
/// twice; ``OutgoingFile/digest``), over the same secure channel.
///
/// Wire form (inside the channel):
/// ```
/// id (16) ‖ size (uint64) ‖ chunk size (uint32) ‖ key (32)
///   ‖ name length (uint16) ‖ name (UTF-8, ≤ 1,024 bytes; sanitised by the receiver)
/// ```
public struct FileOffer: Sendable, Equatable {
    /// The chunk size every sender uses (64 KiB).
    public static let defaultChunkSize: UInt32 = 64 * 1024
    /// The largest file announced (1 TiB).
    public static let maxSize: UInt64 = 1 << 40
    /// The longest name accepted on the wire.
    public static let maxNameBytes = 1_024

    /// The transfer.
    public let id: FileTransferID
    /// The name the sender gave (never used as a path: see ``SafeFileName``).
    public let name: String
    /// The file's size in bytes.
    public let size: UInt64
    /// Bytes per chunk (the last may be shorter).
    public let chunkSize: UInt32
    /// The AES-256-GCM key of the chunks.
    public let key: SecretBytes

    /// An offer.
    ///
    /// - Throws: ``FileTransferError/Code/malformed`` for a key not 32 bytes, a
    ///   chunk size outside 1 KiB…1 MiB, a size over ``maxSize`` or a name over 1,024 bytes.
    public init(
        id: FileTransferID, name: String, size: UInt64, chunkSize: UInt32 = FileOffer.defaultChunkSize,
        key: SecretBytes
    ) throws(FileTransferError) {
        guard key.count == 32, (1_024...1_048_576).contains(chunkSize), size <= Self.maxSize,
            name.utf8.count <= Self.maxNameBytes
        else { throw FileTransferError(.malformed, "file offer fields") }
        self.id = id
        self.name = name
        self.size = size
        self.chunkSize = chunkSize
        self.key = key
    }

    /// How many chunks the file has (0 for an empty file).
    public var chunkCount: UInt64 { (size + UInt64(chunkSize) - 1) / UInt64(chunkSize) }

    /// The plaintext length of chunk `index`.
    public func chunkLength(_ index: UInt64) -> Int {
        guard index < chunkCount else { return 0 }
        return Int(min(UInt64(chunkSize), size - index * UInt64(chunkSize)))
    }

    /// The wire form.
    public func encoded() -> [UInt8] {
        var bytes = id.bytes
        bytes.reserveCapacity(16 + 8 + 4 + 32 + 2 + name.utf8.count)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: size >> UInt64(shift))) }
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: chunkSize >> UInt32(shift))) }
        key.withUnsafeBytes { bytes.append(contentsOf: $0) }
        let name = Array(name.utf8)
        bytes += [UInt8(name.count >> 8), UInt8(name.count & 0xFF)]
        bytes += name
        return bytes
    }

    /// Parses the wire form; every byte must be used.
    ///
    /// - Throws: ``FileTransferError/Code/malformed``.
    public init(decoding bytes: [UInt8]) throws(FileTransferError) {
        let fixed = 16 + 8 + 4 + 32 + 2
        guard bytes.count >= fixed else { throw FileTransferError(.malformed, "short file offer") }
        let size = bytes[16..<24].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let chunkSize = bytes[24..<28].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let nameLength = Int(bytes[fixed - 2]) << 8 | Int(bytes[fixed - 1])
        guard bytes.count == fixed + nameLength, let name = String(validating: bytes[fixed...], as: UTF8.self) else {
            throw FileTransferError(.malformed, "file offer name")
        }
        try self.init(
            id: FileTransferID(Array(bytes[0..<16])), name: name, size: size, chunkSize: chunkSize,
            key: SecretBytes(bytes[28..<60]))
    }
}

extension FileOffer: Hashable {
    /// Hashes the transfer id (equal offers have equal ids).
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}
