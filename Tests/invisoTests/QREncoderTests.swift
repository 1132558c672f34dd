import Testing

@testable import inviso

/// Reed–Solomon and data encoding against worked examples, version choice against the
/// standard's capacity table, and the mask penalty rules on hand-made grids.
@Suite("QR encoder")
struct QREncoderTests {
    @Test("GF(256): α⁸ = 29 (x⁸ = x⁴ + x³ + x² + 1), and log inverts exp for every non-zero element")
    func field() {
        let field = GaloisField256()
        #expect(field.power(8) == 29)
        #expect(field.power(255) == 1)
        for power in 0..<255 { #expect(field.log[Int(field.exp[power])] == power) }
        #expect(Set(field.exp).count == 255)
        #expect(field.multiply(0x53, 0xCA) == field.exp[(field.log[0x53] + field.log[0xCA]) % 255])
        #expect(field.multiply(0, 7) == 0)
    }

    @Test("The generator polynomial for 10 codewords")
    func generator() {
        // ISO/IEC 18004 Annex A (10 codewords), as listed in "An artisanal QR code"
        // (quaxio.com, PagedOut! #2) and computed by python-qrcode 8.2.
        #expect(
            ReedSolomonEncoder(degree: 10).generatorPolynomial == [1, 216, 194, 159, 111, 199, 94, 95, 113, 157, 193])
        #expect(ReedSolomonEncoder(degree: 1).generatorPolynomial == [1, 1])
        #expect(ReedSolomonEncoder(degree: 2).generatorPolynomial == [1, 3, 2])  // (x + 1)(x + 2)
    }

    @Test("HELLO WORLD 1-M: the error-correction codewords of the worked example")
    func helloWorld() {
        // Data codewords of "HELLO WORLD" in alphanumeric mode, 1-M, and their 10 EC
        // codewords, from the thonky.com QR Code Tutorial (error-correction coding);
        // python-qrcode 8.2 computes the same.
        let data: [UInt8] = [32, 91, 11, 120, 209, 114, 220, 77, 67, 64, 236, 17, 236, 17, 236, 17]
        #expect(ReedSolomonEncoder(degree: 10).remainder(of: data) == [196, 35, 39, 119, 235, 215, 231, 226, 93, 23])
    }

    @Test("PagedOut! 1-M: byte-mode data codewords and error correction")
    func pagedOut() throws {
        // Data codewords from "An artisanal QR code" (quaxio.com, PagedOut! #2); the EC
        // codewords from python-qrcode 8.2.
        let version = try #require(QRVersion(1))
        let data = QRCodewords.dataCodewords(Array("PagedOut!".utf8), version: version, level: .medium)
        #expect(
            data == [0x40, 0x95, 0x06, 0x16, 0x76, 0x56, 0x44, 0xF7, 0x57, 0x42, 0x10, 0xEC, 0x11, 0xEC, 0x11, 0xEC])
        #expect(
            QRCodewords.interleaved(Array("PagedOut!".utf8), version: version, level: .medium).suffix(10)
                == [74, 190, 29, 185, 203, 209, 185, 63, 7, 116])
    }

    @Test(
        "Byte-mode capacities of versions 1–10 match the standard's Table 7", arguments: QRErrorCorrectionLevel.allCases
    )
    func capacities(level: QRErrorCorrectionLevel) throws {
        let table: [QRErrorCorrectionLevel: [Int]] = [
            .low: [17, 32, 53, 78, 106, 134, 154, 192, 230, 271],
            .medium: [14, 26, 42, 62, 84, 106, 122, 152, 180, 213],
            .quartile: [11, 20, 32, 46, 60, 74, 86, 108, 130, 151],
            .high: [7, 14, 24, 34, 44, 58, 64, 84, 98, 119],
        ]
        let expected = try #require(table[level])
        for (index, capacity) in expected.enumerated() {
            let version = try #require(QRVersion(index + 1))
            #expect(version.byteCapacity(level) == capacity, "\(version) \(level.rawValue)")
            // The smallest version that fits is chosen: capacity bytes fit, one more does not.
            #expect(try QRCode.encode([UInt8](repeating: 0x41, count: capacity), level: level).version == version)
            let next = try QRCode.encode([UInt8](repeating: 0x41, count: capacity + 1), level: level).version
            #expect(next.number == index + 2)
        }
    }

    @Test("Version sizes, codeword totals and remainder bits")
    func versionFacts() throws {
        // Table 1 of the standard: total codewords and remainder bits.
        let facts: [(Int, Int, Int)] = [
            (1, 26, 0), (2, 44, 7), (6, 172, 7), (7, 196, 0), (14, 581, 3), (21, 1156, 4), (40, 3706, 0),
        ]
        for (number, total, remainder) in facts {
            let version = try #require(QRVersion(number))
            #expect(version.size == 17 + 4 * number)
            #expect(version.totalCodewords == total, "\(version)")
            #expect(version.remainderBits == remainder, "\(version)")
        }
        #expect(QRVersion(0) == nil && QRVersion(41) == nil)
    }

    @Test("A join link fits version 3 at M; data that fits nowhere is a typed error")
    func versionChoice() throws {
        let link = "inviso://join/271828#orbit-violin-quantum"
        let code = try QRCode.encode(text: link)
        #expect(code.version.number == 3 && code.level == .medium && code.size == 29)
        let tenAtMost = try #require(QRVersion(10))
        #expect(throws: QRError.dataTooLong(bytes: 214, capacity: 213)) {
            try QRCode.encode([UInt8](repeating: 1, count: 214), versions: QRVersion.minimum...tenAtMost)
        }
        #expect(throws: QRError.self) { try QRCode.encode([UInt8](repeating: 1, count: 2_332)) }
        #expect(try QRCode.encode([UInt8](repeating: 1, count: 2_331), level: .medium).version.number == 40)
        #expect(try QRCode.encode([UInt8]()).version.number == 1)
    }

    // MARK: - Penalty rules

    static func grid(_ rows: [String]) -> (size: Int, modules: [Bool]) {
        (rows.count, rows.flatMap { $0.map { $0 == "1" } })
    }

    @Test("Penalty of an all-light 7×7 grid: runs 70, blocks 108, balance 100")
    func allLight() {
        let (size, modules) = Self.grid(Array(repeating: "0000000", count: 7))
        let penalty = QRPenalty(size: size, modules: modules)
        #expect(penalty.runs == 14 * (3 + 2))
        #expect(penalty.blocks == 36 * 3)
        #expect(penalty.finderLike == 0)
        #expect(penalty.balance == 100)
        #expect(penalty.total == 278)
    }

    @Test("A checkerboard scores zero")
    func checkerboard() {
        let rows = (0..<8).map { y in String((0..<8).map { ($0 + y) % 2 == 0 ? "1" : "0" }) }
        let (size, modules) = Self.grid(rows)
        #expect(QRPenalty(size: size, modules: modules).total == 0)
    }

    @Test("Rule 3 counts a 1:1:3:1:1 run once with four light modules beside it, the quiet zone included")
    func finderLike() {
        var rows = Array(repeating: "00000000000", count: 11)
        rows[3] = "00001011101"
        #expect(QRPenalty(size: 11, modules: Self.grid(rows).modules).finderLike == 40)
        rows[3] = "10111010000"  // light on both sides (one side is the quiet zone): still one
        #expect(QRPenalty(size: 11, modules: Self.grid(rows).modules).finderLike == 40)
        rows[3] = "11011101100"  // dark right before and right after: not finder-like
        #expect(QRPenalty(size: 11, modules: Self.grid(rows).modules).finderLike == 0)
    }

    @Test("Rule 1 and rule 4 on hand-made grids")
    func runsAndBalance() {
        // A row of six dark modules: 3 + 1.
        var rows = Array(repeating: "0101010101", count: 10)
        rows = rows.enumerated().map { $0.offset % 2 == 0 ? $0.element : "1010101010" }
        rows[0] = "1111110101"
        let penalty = QRPenalty(size: 10, modules: Self.grid(rows).modules)
        #expect(penalty.runs == 4)
        // 44 of 100 dark: 6 % off → 10; 39 of 100: 11 % off → 20.
        let fortyFour = (0..<100).map { $0 < 44 }
        #expect(QRPenalty(size: 10, modules: fortyFour).balance == 10)
        let thirtyNine = (0..<100).map { $0 < 39 }
        #expect(QRPenalty(size: 10, modules: thirtyNine).balance == 20)
    }
}
