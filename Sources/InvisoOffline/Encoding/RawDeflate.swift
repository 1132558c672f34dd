import CZlib
import Synchronization

/// Raw DEFLATE (RFC 1951: no zlib or gzip header, no checksum) through the system's zlib,
/// as SecureChats compresses a Fairy Tale payload: Android with Java's `Deflater(9, true)`,
/// which is zlib with window bits −15 and memory level 8, so the same zlib settings give the
/// same bytes; iOS with Apple's `COMPRESSION_ZLIB`, raw DEFLATE at level 5.
///
/// zlib streams are reused (``ZStream``): a deflate stream holds about 270 KB of state that
/// zlib allocates zeroed, which cost more than compressing a message and, through the
/// allocator's large-block path, made timings swing by half; `deflateReset` and
/// `inflateReset` give the same output as a fresh stream.
package enum RawDeflate {
    /// The most a payload may inflate to: a 10,000-byte message in a rotation envelope is
    /// about 20 KB of JSON. Anything larger is refused, not allocated (a small paste could
    /// otherwise expand a thousandfold).
    package static let maxInflatedByteCount = 256 * 1024

    /// `bytes` compressed at `level` (0…9).
    ///
    /// - Parameter leadingEmptyBlock: Start the stream with an empty fixed-Huffman block
    ///   (zlib's `Z_PARTIAL_FLUSH` before any input: 10 bits, so the first byte is `0x02`).
    ///   Android's Fairy Tale decoder loses a first byte of `0x00` or ≥ `0x80` (see
    ///   ``FairyTale``); any inflater reads the stream as before.
    package static func deflate(_ bytes: [UInt8], level: Int32, leadingEmptyBlock: Bool = false) -> [UInt8] {
        let stream = ZStream.take(.deflate(level: level))
        defer { ZStream.give(stream) }
        let pointer = stream.pointer
        var input = bytes
        var output = [UInt8](repeating: 0, count: Int(deflateBound(pointer, UInt(bytes.count))) + 16)
        let result = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                pointer.pointee.next_out = target.baseAddress
                pointer.pointee.avail_out = UInt32(target.count)
                if leadingEmptyBlock {
                    let flushed = CZlib.deflate(pointer, Z_PARTIAL_FLUSH)
                    precondition(flushed == Z_OK, "zlib refused a partial flush at the start")
                }
                pointer.pointee.next_in = source.baseAddress
                pointer.pointee.avail_in = UInt32(source.count)
                return CZlib.deflate(pointer, Z_FINISH)
            }
        }
        // The buffer holds deflateBound's worst case, so one call finishes.
        precondition(result == Z_STREAM_END, "zlib did not finish within deflateBound")
        let count = Int(pointer.pointee.total_out)
        pointer.pointee.next_in = nil
        pointer.pointee.next_out = nil
        return Array(output[..<count])
    }

    /// Inflates raw DEFLATE data.
    ///
    /// - Throws: ``OfflineError/Code/tooLarge`` past ``maxInflatedByteCount``,
    ///   ``OfflineError/Code/notCompressed`` for data that is not one complete DEFLATE stream
    ///   (or has bytes after it).
    package static func inflate(_ bytes: [UInt8]) throws(OfflineError) -> [UInt8] {
        let stream = ZStream.take(.inflate)
        defer { ZStream.give(stream) }
        let pointer = stream.pointer
        var input = bytes
        var output: [UInt8] = []
        // Payloads are a few hundred bytes to a few KB: start small (a zeroed 16 KB chunk
        // per call showed in profiles); a larger output takes more rounds.
        var chunk = [UInt8](repeating: 0, count: min(16 * 1024, max(1024, bytes.count * 4)))
        var status: Int32 = Z_OK
        input.withUnsafeMutableBufferPointer { source in
            pointer.pointee.next_in = source.baseAddress
            pointer.pointee.avail_in = UInt32(source.count)
            while status == Z_OK, output.count <= maxInflatedByteCount {
                chunk.withUnsafeMutableBufferPointer { target in
                    pointer.pointee.next_out = target.baseAddress
                    pointer.pointee.avail_out = UInt32(target.count)
                    status = CZlib.inflate(pointer, Z_NO_FLUSH)
                    output += target[..<(target.count - Int(pointer.pointee.avail_out))]
                }
                // No progress possible: the input ended before the stream did. (Any status
                // other than Z_OK, Z_BUF_ERROR included, ends the loop by its condition.)
                if status == Z_OK, pointer.pointee.avail_in == 0, pointer.pointee.avail_out != 0 { break }
            }
        }
        let leftover = pointer.pointee.avail_in
        pointer.pointee.next_in = nil
        pointer.pointee.next_out = nil
        guard output.count <= maxInflatedByteCount else { throw OfflineError(.tooLarge, "inflated payload") }
        guard status == Z_STREAM_END, leftover == 0 else { throw OfflineError(.notCompressed, "DEFLATE stream") }
        return output
    }
}

/// A zlib stream kept for reuse: the `z_stream` lives at a fixed address (zlib's state
/// points back to it), is reset when taken, and is ended when the object goes.
///
/// A few idle streams of each kind wait in a small pool behind a lock, so concurrent callers
/// each get their own; a caller that finds none makes one.
final class ZStream: @unchecked Sendable {
    // @unchecked: the stream is used by one caller at a time — whoever took it from the
    // pool — and the pool itself is behind a Mutex.

    enum Kind: Hashable {
        case deflate(level: Int32)
        case inflate
    }

    let kind: Kind
    let pointer: UnsafeMutablePointer<z_stream>

    private init(_ kind: Kind) {
        self.kind = kind
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: z_stream())
        let status: Int32
        switch kind {
        case .deflate(let level):
            status = deflateInit2_(pointer, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        case .inflate:
            status = inflateInit2_(pointer, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        }
        precondition(status == Z_OK, "zlib refused to initialise a stream with constant arguments")
    }

    deinit {
        switch kind {
        case .deflate: deflateEnd(pointer)
        case .inflate: inflateEnd(pointer)
        }
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }

    /// Idle streams by kind; at most ``poolLimit`` of each are kept.
    private static let pool = Mutex<[Kind: [ZStream]]>([:])
    private static let poolLimit = 4

    /// A reset stream of `kind`: from the pool, or new.
    static func take(_ kind: Kind) -> ZStream {
        if let stream = pool.withLock({ $0[kind]?.popLast() }) {
            let status: Int32
            switch kind {
            case .deflate: status = deflateReset(stream.pointer)
            case .inflate: status = inflateReset(stream.pointer)
            }
            if status == Z_OK { return stream }
        }
        return ZStream(kind)
    }

    /// Returns a stream to the pool (or lets it go when the pool is full).
    static func give(_ stream: ZStream) {
        pool.withLock { pool in
            if pool[stream.kind, default: []].count < poolLimit { pool[stream.kind, default: []].append(stream) }
        }
    }
}
