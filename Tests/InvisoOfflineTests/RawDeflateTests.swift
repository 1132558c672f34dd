import Foundation
import InvisoCrypto
import Testing

@testable import InvisoOffline

/// Raw DEFLATE against `Resources/offline-vectors.json`'s "deflate" entries, made with
/// Python's zlib binding (`scripts/vectors/offline_vectors.py`).
@Suite("Raw DEFLATE")
struct RawDeflateTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let name: String
        let level: Int32
        let input: [UInt8]
        let output: [UInt8]
        var testDescription: String { "\(name), level \(level)" }
    }

    static let vectors: [Vector] = {
        let items = OfflineVectorFile.section("deflate")
        return items.compactMap { item in
            guard let name = item["name"] as? String, let level = item["level"] as? Int, let input = item["input"] as? String,
                let output = (item["output"] as? String).flatMap(Hex.decode)
            else { return nil }
            return Vector(name: name, level: Int32(level), input: Array(input.utf8), output: output)
        }
    }()

    @Test("the vector file holds every envelope at levels 9 and 5")
    func vectorFile() {
        #expect(Self.vectors.count == 18)
        #expect(Set(Self.vectors.map(\.level)) == [9, 5])
    }

    @Test("level 9 and 5 give the bytes zlib gives Java and Apple's apps; they inflate back", arguments: vectors)
    func matches(_ vector: Vector) throws {
        #expect(RawDeflate.deflate(vector.input, level: vector.level) == vector.output)
        #expect(try RawDeflate.inflate(vector.output) == vector.input)
    }

    @Test("empty input, and every level, round-trip")
    func roundTrip() throws {
        let text = Array(String(repeating: "Rapunzel, Rapunzel, let down your hair. ", count: 40).utf8)
        for level: Int32 in 0...9 {
            #expect(try RawDeflate.inflate(RawDeflate.deflate(text, level: level)) == text)
        }
        #expect(try RawDeflate.inflate(RawDeflate.deflate([], level: 9)) == [])
    }

    @Test("not a stream, a cut stream and trailing bytes are refused")
    func refused() throws {
        let stream = RawDeflate.deflate(Array("hello hello hello hello".utf8), level: 9)
        for bad in [[0xFF, 0xFF, 0xFF], Array(stream.dropLast(2)), stream + [0x00], []] as [[UInt8]] {
            #expect(throws: OfflineError(.notCompressed)) { try RawDeflate.inflate(bad) }
        }
    }

    @Test("a payload that would inflate past the limit is refused, not allocated")
    func bomb() {
        let zeros = [UInt8](repeating: 0, count: RawDeflate.maxInflatedByteCount + 1)
        let bomb = RawDeflate.deflate(zeros, level: 9)
        #expect(bomb.count < 1_024)
        #expect(throws: OfflineError(.tooLarge)) { try RawDeflate.inflate(bomb) }
    }
}
