import Foundation
import Testing

@testable import inviso

/// The QR encoder against python-qrcode, an independent implementation: module matrices for
/// every mask, codewords, block layouts, alignment positions and the BCH words. The vectors
/// are in `Resources/qr-vectors.json`, made by `scripts/vectors/qr_vectors.py` (python-qrcode
/// 8.2); the tests need no Python.
@Suite("QR encoder vs python-qrcode")
struct QRVectorTests {
    struct Vectors: Decodable {
        struct Symbol: Decodable {
            let label: String
            let data_hex: String
            let version: Int
            let level: String
            let codewords_hex: String
            let python_qrcode_mask: Int
            let masks: [[String]]
        }
        let source: String
        let symbols: [Symbol]
        let blocks: [String: [[[Int]]]]
        let alignment: [[Int]]
        let format_words: [String: [Int]]
        let version_words: [String: Int]
    }

    static let vectors: Vectors = {
        let bundle = Bundle.module
        guard
            let url = bundle.url(forResource: "qr-vectors", withExtension: "json", subdirectory: "Resources")
                ?? bundle.url(forResource: "qr-vectors", withExtension: "json"),
            let data = try? Data(contentsOf: url),
            let vectors = try? JSONDecoder().decode(Vectors.self, from: data)
        else { fatalError("Resources/qr-vectors.json is missing or malformed") }
        return vectors
    }()

    static func bytes(hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return result
    }

    static func rows(_ code: QRCode) -> [String] {
        (0..<code.size).map { y in String((0..<code.size).map { code[$0, y] ? "1" : "0" }) }
    }

    @Test("Every symbol matches python-qrcode module for module, for each of the 8 masks")
    func matrices() throws {
        var compared = 0
        for symbol in Self.vectors.symbols {
            let level = try #require(QRErrorCorrectionLevel(rawValue: symbol.level))
            let version = try #require(QRVersion(symbol.version))
            #expect(symbol.masks.count == 8)
            for (reference, expected) in symbol.masks.enumerated() {
                let code = try QRCode.encode(
                    Self.bytes(hex: symbol.data_hex), level: level, versions: version...version, mask: QRMask(reference)
                )
                #expect(code.size == expected.count)
                let actual = Self.rows(code)
                let differing = zip(actual, expected).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
                #expect(differing.isEmpty, "\(symbol.label), mask \(reference): rows \(differing) differ")
                compared += 1
            }
        }
        // 8 inputs × 8 masks; a runner that compares nothing must fail.
        #expect(compared == 64, "compared \(compared) symbols from \(Self.vectors.source)")
    }

    @Test("Interleaved codewords match python-qrcode")
    func codewords() throws {
        for symbol in Self.vectors.symbols {
            let level = try #require(QRErrorCorrectionLevel(rawValue: symbol.level))
            let version = try #require(QRVersion(symbol.version))
            let codewords = QRCodewords.interleaved(Self.bytes(hex: symbol.data_hex), version: version, level: level)
            #expect(codewords == Self.bytes(hex: symbol.codewords_hex), "\(symbol.label)")
            #expect(codewords.count == version.totalCodewords)
        }
        #expect(Self.vectors.symbols.count == 8)
    }

    @Test("Block layout (Table 9) for all 40 versions × 4 levels matches python-qrcode")
    func blockLayouts() throws {
        var checked = 0
        for level in QRErrorCorrectionLevel.allCases {
            let expected = try #require(Self.vectors.blocks[level.rawValue])
            #expect(expected.count == 40)
            for version in QRVersion.all {
                let reference = expected[version.number - 1]
                let blocks = QRCodewords.blocks(
                    [UInt8](repeating: 0, count: version.dataCodewords(level)), version: version, level: level)
                let actual = blocks.map { [$0.data.count + $0.ec.count, $0.data.count] }
                #expect(actual == reference, "\(version) \(level.rawValue)")
                #expect(reference.reduce(0) { $0 + $1[0] } == version.totalCodewords, "\(version) total codewords")
                checked += 1
            }
        }
        #expect(checked == 160)
    }

    @Test("Alignment pattern centres for all 40 versions match python-qrcode")
    func alignment() {
        #expect(Self.vectors.alignment.count == 40)
        for version in QRVersion.all {
            #expect(version.alignmentPatternCenters == Self.vectors.alignment[version.number - 1], "\(version)")
        }
    }

    @Test("Format words (32) and version words (34) match python-qrcode")
    func bchWords() throws {
        var checked = 0
        for level in QRErrorCorrectionLevel.allCases {
            let words = try #require(Self.vectors.format_words[level.rawValue])
            for mask in QRMask.all {
                #expect(QRFormatInformation.formatWord(level: level, mask: mask) == words[mask.reference])
                checked += 1
            }
        }
        for version in QRVersion.all where version.number >= 7 {
            let word = try #require(Self.vectors.version_words[String(version.number)])
            #expect(QRFormatInformation.versionWord(version) == word, "\(version)")
            checked += 1
        }
        #expect(checked == 32 + 34)
    }

    @Test("The automatic mask has the lowest penalty of the eight")
    func automaticMask() throws {
        for symbol in Self.vectors.symbols {
            let level = try #require(QRErrorCorrectionLevel(rawValue: symbol.level))
            let version = try #require(QRVersion(symbol.version))
            let data = Self.bytes(hex: symbol.data_hex)
            let chosen = try QRCode.encode(data, level: level, versions: version...version)
            let penalties = try QRMask.all.map { mask in
                let code = try QRCode.encode(data, level: level, versions: version...version, mask: mask)
                return QRPenalty(size: code.size, modules: code.modules).total
            }
            #expect(penalties[chosen.mask.reference] == penalties.min(), "\(symbol.label): \(penalties)")
            #expect(penalties.firstIndex(of: penalties.min()!) == chosen.mask.reference, "ties go to the lower mask")
        }
    }
}
