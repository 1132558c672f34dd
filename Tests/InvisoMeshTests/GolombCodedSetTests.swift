import InvisoMesh
import InvisoTesting
import Testing

@Suite("Golomb-coded sync filter")
struct GolombCodedSetTests {
    @Test("P follows the false-positive rate as in BitChat")
    func parameter() {
        #expect(GolombCodedSet.parameter(falsePositiveRate: 0.01) == 7)
        #expect(GolombCodedSet.parameter(falsePositiveRate: 0.5) == 2)  // clamped to 0.25
        #expect(GolombCodedSet.parameter(falsePositiveRate: 1.0 / 1024) == 10)
    }

    @Test("a hand-encoded filter decodes to its buckets")
    func handEncoded() {
        // P = 2, buckets 3, 4, 11: deltas 3, 1, 7 → x-1 = 2, 0, 6 → q/r = 0/10, 0/00, 1/10
        // bits: 0 10 | 0 00 | 10 10 → 0100 0010 10(000000) → 0x42 0x80. The zero padding
        // would decode as more deltas of 1 (12, 13): decoding stops at M = 12, as BitChat's
        // does (with P = 7 the padding is always shorter than one code).
        let filter = GolombCodedSet(p: 2, m: 12, data: [0x42, 0x80])
        #expect(filter.decodedBuckets() == [3, 4, 11])
        let membership = filter.membership()
        #expect(membership.mightContain(3 + 12 * 5))
        #expect(!membership.mightContain(5))
    }

    @Test("every included hash is found, the false-positive rate is near 2^-P, and the budget holds")
    func roundTrip() {
        var generator = SeededGenerator(seed: 7)
        let hashes = (0..<300).map { _ in generator.next() & 0x7FFF_FFFF_FFFF_FFFF }
        let (filter, included) = GolombCodedSet.build(newestFirst: hashes, maxBytes: 400, falsePositiveRate: 0.01)
        #expect(filter.p == 7)
        #expect(included == 300)
        #expect(filter.m == 300 << 7)
        #expect(filter.data.count <= 400)
        let membership = filter.membership()
        #expect(hashes.allSatisfy(membership.mightContain))
        var falsePositives = 0
        for _ in 0..<20_000 where membership.mightContain(generator.next() & 0x7FFF_FFFF_FFFF_FFFF) { falsePositives += 1 }
        #expect(falsePositives > 20 && falsePositives < 400, "\(falsePositives) of 20,000")
    }

    @Test("a filter over budget keeps the newest hashes")
    func trimmed() {
        var generator = SeededGenerator(seed: 9)
        let hashes = (0..<2_000).map { _ in generator.next() & 0x7FFF_FFFF_FFFF_FFFF }
        let (filter, included) = GolombCodedSet.build(newestFirst: hashes, maxBytes: 400, falsePositiveRate: 0.01)
        #expect(included < 2_000 && included > 200)
        #expect(filter.data.count <= 400)
        let membership = filter.membership()
        #expect(hashes.prefix(included).allSatisfy(membership.mightContain))
        let empty = GolombCodedSet.build(newestFirst: [UInt64](), maxBytes: 400, falsePositiveRate: 0.01)
        #expect(empty.filter.m == 1 && empty.filter.data.isEmpty && empty.includedCount == 0)
        #expect(!empty.filter.membership().mightContain(1))
    }
}
