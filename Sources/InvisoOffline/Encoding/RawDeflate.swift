import CZlib

/// Raw DEFLATE (RFC 1951: no zlib or gzip header, no checksum) through the system's zlib,
/// as SecureChats compresses a Fairy Tale payload: Android with Java's `Deflater(9, true)`,
/// which is zlib with window bits −15 and memory level 8, so the same zlib settings give the
/// same bytes; iOS with Apple's `COMPRESSION_ZLIB`, raw DEFLATE at level 5.
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
        var stream = z_stream()
        let status = deflateInit2_(
            &stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        precondition(status == Z_OK, "zlib refused deflateInit2 with constant arguments")
        defer { deflateEnd(&stream) }
        var input = bytes
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(bytes.count))) + 16)
        let result = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.next_out = target.baseAddress
                stream.avail_out = UInt32(target.count)
                if leadingEmptyBlock {
                    let flushed = CZlib.deflate(&stream, Z_PARTIAL_FLUSH)
                    precondition(flushed == Z_OK, "zlib refused a partial flush at the start")
                }
                stream.next_in = source.baseAddress
                stream.avail_in = UInt32(source.count)
                return CZlib.deflate(&stream, Z_FINISH)
            }
        }
        // The buffer holds deflateBound's worst case, so one call finishes.
        precondition(result == Z_STREAM_END, "zlib did not finish within deflateBound")
        return Array(output[..<Int(stream.total_out)])
    }

    /// Inflates raw DEFLATE data.
    ///
    /// - Throws: ``OfflineError/Code/tooLarge`` past ``maxInflatedByteCount``,
    ///   ``OfflineError/Code/notCompressed`` for data that is not one complete DEFLATE stream
    ///   (or has bytes after it).
    package static func inflate(_ bytes: [UInt8]) throws(OfflineError) -> [UInt8] {
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw OfflineError(.notCompressed, "inflate init")
        }
        defer { inflateEnd(&stream) }
        var input = bytes
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        var status: Int32 = Z_OK
        input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = UInt32(source.count)
            while status == Z_OK, output.count <= maxInflatedByteCount {
                chunk.withUnsafeMutableBufferPointer { target in
                    stream.next_out = target.baseAddress
                    stream.avail_out = UInt32(target.count)
                    status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    output += target[..<(target.count - Int(stream.avail_out))]
                }
                // No progress possible: the input ended before the stream did. (Any status
                // other than Z_OK, Z_BUF_ERROR included, ends the loop by its condition.)
                if status == Z_OK, stream.avail_in == 0, stream.avail_out != 0 { break }
            }
        }
        guard output.count <= maxInflatedByteCount else { throw OfflineError(.tooLarge, "inflated payload") }
        guard status == Z_STREAM_END, stream.avail_in == 0 else { throw OfflineError(.notCompressed, "DEFLATE stream") }
        return output
    }
}
