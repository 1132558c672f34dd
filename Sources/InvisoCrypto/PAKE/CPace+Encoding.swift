// The string utilities of draft-irtf-cfrg-cpace-21 Appendix A (prepend_len, lv_cat,
// generator_string, lexiographically_larger, o_cat, transcript_ir, transcript_oc) and the
// parser for the messages Inviso sends, lv_cat(Y, AD).

extension CPace {
    /// The LEB128 encoding of a length: 7 bits a byte, least significant first, bit 7 set
    /// on every byte but the last (draft §6.3).
    package static func lengthPrefix(_ length: Int) -> [UInt8] {
        precondition(length >= 0, "negative length")
        var remaining = UInt(length)
        var encoded: [UInt8] = []
        repeat {
            let low = UInt8(truncatingIfNeeded: remaining & 0x7f)
            remaining >>= 7
            encoded.append(remaining == 0 ? low : low | 0x80)
        } while remaining != 0
        return encoded
    }

    /// prepend_len(data) = LEB128(len(data)) ‖ data.
    package static func prependLength(_ data: [UInt8]) -> [UInt8] {
        lengthPrefix(data.count) + data
    }

    /// lv_cat(a0, a1, …) = prepend_len(a0) ‖ prepend_len(a1) ‖ ….
    package static func lvCat(_ parts: [UInt8]...) -> [UInt8] {
        parts.flatMap(prependLength)
    }

    /// Whether `a` sorts after `b`: the first differing byte decides, and a string is larger
    /// than its proper prefixes (the draft's `lexiographically_larger`). Variable time: the
    /// inputs are public messages.
    package static func lexicographicallyLarger(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        for (x, y) in zip(a, b) where x != y { return x > y }
        return a.count > b.count
    }

    /// o_cat(a, b) = `"oc"` ‖ the larger ‖ the smaller.
    package static func orderedConcatenation(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        let marker = Array("oc".utf8)
        return lexicographicallyLarger(a, b) ? marker + a + b : marker + b + a
    }

    /// transcript_ir(Ya, ADa, Yb, ADb) = lv_cat(Ya, ADa) ‖ lv_cat(Yb, ADb).
    package static func transcriptIR(_ ya: [UInt8], _ ada: [UInt8], _ yb: [UInt8], _ adb: [UInt8]) -> [UInt8] {
        lvCat(ya, ada) + lvCat(yb, adb)
    }

    /// transcript_oc(Ya, ADa, Yb, ADb) = o_cat(lv_cat(Ya, ADa), lv_cat(Yb, ADb)).
    package static func transcriptOC(_ ya: [UInt8], _ ada: [UInt8], _ yb: [UInt8], _ adb: [UInt8]) -> [UInt8] {
        orderedConcatenation(lvCat(ya, ada), lvCat(yb, adb))
    }

    /// The length of the zero padding in the generator string:
    /// max(0, s_in_bytes − 1 − len(prepend_len(PRS)) − len(prepend_len(DSI))).
    package static func zeroPaddingLength(prsByteCount: Int) -> Int {
        let used = lengthPrefix(prsByteCount).count + prsByteCount + lengthPrefix(dsi.count).count + dsi.count
        return max(0, hashBlockByteCount - 1 - used)
    }

    /// Feeds generator_string(DSI, PRS, CI, sid, 128) = lv_cat(DSI, PRS, zero_bytes(len_zpad),
    /// CI, sid) to `sink` piece by piece, so that the password is never copied.
    package static func generatorString(
        prs: UnsafeRawBufferPointer, ci: [UInt8], sid: [UInt8], into sink: (UnsafeRawBufferPointer) -> Void
    ) {
        let padding = [UInt8](repeating: 0, count: zeroPaddingLength(prsByteCount: prs.count))
        for piece in [prependLength(dsi), lengthPrefix(prs.count)] { piece.withUnsafeBytes(sink) }
        sink(prs)
        for piece in [padding, ci, sid].map(prependLength) { piece.withUnsafeBytes(sink) }
    }

    /// The generator string as one array, for tests; it contains the password.
    package static func generatorString(prs: [UInt8], ci: [UInt8], sid: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        prs.withUnsafeBytes { password in
            generatorString(prs: password, ci: ci, sid: sid) { result.append(contentsOf: $0) }
        }
        return result
    }

    /// Splits a message lv_cat(Y, AD) into Y and AD. Lengths must be minimal LEB128 below
    /// 2^28, Y must be 32 bytes and nothing may follow AD; `nil` otherwise.
    package static func parseMessage(_ message: [UInt8]) -> (share: [UInt8], associatedData: [UInt8])? {
        var offset = 0
        guard let share = readField(message, &offset), share.count == shareByteCount,
            let associatedData = readField(message, &offset), offset == message.count
        else { return nil }
        return (share, associatedData)
    }

    /// Reads prepend_len(field) at `offset` and moves past it; `nil` when the length is
    /// truncated, not minimal, 2^28 or more, or runs past the end.
    private static func readField(_ bytes: [UInt8], _ offset: inout Int) -> [UInt8]? {
        var length = 0
        var shift = 0
        while true {
            guard offset < bytes.count, shift < 28 else { return nil }
            let byte = bytes[offset]
            offset += 1
            length |= Int(byte & 0x7f) << shift
            shift += 7
            if byte & 0x80 == 0 {
                // A last byte of zero after others is a non-minimal encoding.
                guard byte != 0 || shift == 7 else { return nil }
                break
            }
        }
        guard length <= bytes.count - offset else { return nil }
        defer { offset += length }
        return Array(bytes[offset..<offset + length])
    }
}
