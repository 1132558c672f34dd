import InvisoNearby
import Testing

@Suite struct TXTRecordTests {
    @Test func roundTripKeepsOrderAndValues() throws {
        let record = try TXTRecord([("v", Array("1".utf8)), ("id", Array("0123456789abcdef".utf8)), ("flag", nil), ("e", [])])
        let bytes = record.encoded()
        #expect(bytes == [3] + Array("v=1".utf8) + [19] + Array("id=0123456789abcdef".utf8) + [4] + Array("flag".utf8) + [2] + Array("e=".utf8))
        let decoded = try TXTRecord(decoding: bytes)
        #expect(decoded == record)
        #expect(decoded.string(for: "ID") == "0123456789abcdef")
        #expect(decoded.contains("FLAG") && decoded.value(for: "flag") == [])
        #expect(decoded.value(for: "e") == [] && decoded.value(for: "missing") == nil)
    }

    @Test func emptyRecordIsOneZeroByte() throws {
        #expect(TXTRecord().encoded() == [0])
        #expect(try TXTRecord(decoding: [0]).attributes.isEmpty)
        #expect(try TXTRecord(decoding: []).attributes.isEmpty)
    }

    /// RFC 6763 §6.4: strings with no key are ignored, and only a key's first occurrence counts.
    @Test func clientRulesOfSection64() throws {
        let bytes: [UInt8] = [3] + Array("=ab".utf8) + [3] + Array("k=1".utf8) + [3] + Array("K=2".utf8) + [0]
        let record = try TXTRecord(decoding: bytes)
        #expect(record.attributes.count == 1)
        #expect(record.string(for: "k") == "1")
    }

    @Test func refusesBadKeysAndLengths() {
        #expect(throws: TXTRecord.Failure.invalidKey) { try TXTRecord([("", nil)]) }
        #expect(throws: TXTRecord.Failure.invalidKey) { try TXTRecord([("a=b", nil)]) }
        #expect(throws: TXTRecord.Failure.invalidKey) { try TXTRecord([("é", nil)]) }
        #expect(throws: TXTRecord.Failure.invalidKey) { try TXTRecord([("a", nil), ("A", [1])]) }
        #expect(throws: TXTRecord.Failure.attributeTooLong) { try TXTRecord([("k", [UInt8](repeating: 1, count: 254))]) }
        #expect(throws: TXTRecord.Failure.truncated) { try TXTRecord(decoding: [5, 0x61, 0x62]) }
    }

    /// Every prefix of a valid record either parses or is refused as truncated; random bytes never crash.
    @Test func truncationAndNoise() throws {
        let bytes = try TXTRecord([("v", [0x31]), ("id", Array(repeating: 0x61, count: 16)), ("caps", [0x37])]).encoded()
        for end in 0..<bytes.count {
            do { _ = try TXTRecord(decoding: bytes[..<end]) } catch { #expect(error == .truncated) }
        }
        var generator = SplitMix(seed: 7)
        for _ in 0..<2_000 {
            let count = Int(generator.next() % 300)
            let noise = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            if let record = try? TXTRecord(decoding: noise) {
                #expect(try TXTRecord(decoding: record.encoded()) == record)
            }
        }
    }
}

/// A small deterministic generator for the randomized tests.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
