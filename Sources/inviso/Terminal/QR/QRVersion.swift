/// A QR symbol version, 1…40: its size and the layout facts that follow from it
/// (ISO/IEC 18004 §5.3.1, §6.3.6, Annex E).
struct QRVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The smallest version.
    static let minimum = QRVersion(uncheckedNumber: 1)
    /// The largest version.
    static let maximum = QRVersion(uncheckedNumber: 40)
    /// Every version, smallest first.
    static let all = (1...40).map { QRVersion(uncheckedNumber: $0) }

    /// The version number, 1…40.
    let number: Int

    /// The version `number`, or `nil` outside 1…40.
    init?(_ number: Int) {
        guard (1...40).contains(number) else { return nil }
        self.number = number
    }

    private init(uncheckedNumber: Int) {
        self.number = uncheckedNumber
    }

    /// Modules per side: 21 for version 1, four more per version.
    var size: Int { 17 + 4 * number }

    /// Row/column coordinates of the alignment-pattern centres (Annex E): none for version 1;
    /// otherwise 6, the far edge minus 7, and evenly spaced (even) steps between them. The
    /// spacing rule reproduces Annex E's table, including its one irregular entry
    /// (version 32, step 26).
    var alignmentPatternCenters: [Int] {
        guard number >= 2 else { return [] }
        let count = number / 7 + 2
        let last = size - 7
        let step: Int
        if number == 32 {
            step = 26
        } else {
            // Round (last − 6) / (count − 1) up to the next even number.
            let span = last - 6
            let intervals = count - 1
            step = (span + 2 * intervals - 1) / (2 * intervals) * 2
        }
        var centers = [6]
        for index in stride(from: count - 2, through: 0, by: -1) {
            centers.append(last - index * step)
        }
        return centers
    }

    /// Bits of the character count indicator in byte mode (Table 3).
    var byteModeCountBits: Int { number <= 9 ? 8 : 16 }

    /// Error-correction codewords per block at `level`.
    func ecCodewordsPerBlock(_ level: QRErrorCorrectionLevel) -> Int {
        level.ecCodewordsPerBlock[number - 1]
    }

    /// Number of error-correction blocks at `level`.
    func blockCount(_ level: QRErrorCorrectionLevel) -> Int {
        level.blockCounts[number - 1]
    }

    /// All codewords the symbol holds (data and error correction): the modules left after
    /// the function patterns, format and version information, in whole bytes.
    var totalCodewords: Int { dataModuleCount / 8 }

    /// Modules after the last whole codeword (left light before masking; "remainder bits").
    var remainderBits: Int { dataModuleCount % 8 }

    /// Data codewords (before error correction) at `level`.
    func dataCodewords(_ level: QRErrorCorrectionLevel) -> Int {
        totalCodewords - ecCodewordsPerBlock(level) * blockCount(level)
    }

    /// The most bytes byte mode can carry at `level` (4 mode bits and the count indicator
    /// come first).
    func byteCapacity(_ level: QRErrorCorrectionLevel) -> Int {
        (dataCodewords(level) * 8 - 4 - byteModeCountBits) / 8
    }

    /// Modules available for codewords: counted on an empty grid with the function
    /// patterns drawn, so the count follows from the same layout code that draws them.
    var dataModuleCount: Int {
        Self.dataModuleCounts[number - 1]
    }

    /// ``dataModuleCount`` of every version, counted once.
    private static let dataModuleCounts = (1...40).map {
        QRModuleGrid(version: QRVersion(uncheckedNumber: $0)).freeModuleCount
    }

    static func < (lhs: QRVersion, rhs: QRVersion) -> Bool { lhs.number < rhs.number }

    var description: String { "version \(number)" }
}
