/// A QR symbol under construction: the module colours plus which modules belong to function
/// patterns (and so are neither data nor masked). `x` is the column, `y` the row, (0, 0) the
/// top-left module.
struct QRModuleGrid: Sendable, Hashable {
    /// Modules per side.
    let size: Int
    /// Row-major colours, `true` = dark.
    private(set) var modules: [Bool]
    /// Row-major flags: `true` for finder, separator, timing, alignment, dark-module, format
    /// and version modules.
    private(set) var isFunction: [Bool]

    /// An empty grid for `version` with every function pattern drawn and the format areas
    /// reserved (light until ``drawFormat(level:mask:)``).
    init(version: QRVersion) {
        size = version.size
        modules = Array(repeating: false, count: size * size)
        isFunction = Array(repeating: false, count: size * size)
        drawFunctionPatterns(version)
    }

    /// Whether the module at column `x`, row `y` is dark.
    subscript(x: Int, y: Int) -> Bool {
        modules[y * size + x]
    }

    /// Modules left for codewords and remainder bits.
    var freeModuleCount: Int {
        isFunction.count { !$0 }
    }

    // MARK: - Function patterns (§6.3)

    private mutating func setFunction(_ x: Int, _ y: Int, _ dark: Bool) {
        modules[y * size + x] = dark
        isFunction[y * size + x] = true
    }

    private mutating func drawFunctionPatterns(_ version: QRVersion) {
        // Timing patterns: row 6 and column 6 alternate, dark on even indices. The finders
        // drawn next overwrite their ends.
        for index in 0..<size {
            setFunction(6, index, index % 2 == 0)
            setFunction(index, 6, index % 2 == 0)
        }
        // Finder patterns with their light separators (a 9×9 square clipped at the edge).
        drawFinder(centerX: 3, centerY: 3)
        drawFinder(centerX: size - 4, centerY: 3)
        drawFinder(centerX: 3, centerY: size - 4)
        // Alignment patterns, except the three that would overlap a finder.
        let centers = version.alignmentPatternCenters
        for (row, y) in centers.enumerated() {
            for (column, x) in centers.enumerated() {
                let last = centers.count - 1
                let overlapsFinder =
                    (row == 0 && column == 0) || (row == 0 && column == last) || (row == last && column == 0)
                if !overlapsFinder { drawAlignment(centerX: x, centerY: y) }
            }
        }
        // Reserve both format areas; the dark module is part of the second one's column.
        drawFormatWord(0)
        // Version information, versions 7 and up (§7.10).
        if version.number >= 7 {
            let word = QRFormatInformation.versionWord(version)
            for bit in 0..<18 {
                let dark = (word >> bit) & 1 == 1
                let long = bit / 3
                let short = size - 11 + bit % 3
                setFunction(short, long, dark)  // top right: 3 columns × 6 rows
                setFunction(long, short, dark)  // bottom left: 6 columns × 3 rows
            }
        }
    }

    private mutating func drawFinder(centerX: Int, centerY: Int) {
        for dy in -4...4 {
            for dx in -4...4 {
                let x = centerX + dx
                let y = centerY + dy
                guard (0..<size).contains(x), (0..<size).contains(y) else { continue }
                let ring = max(abs(dx), abs(dy))
                setFunction(x, y, ring != 2 && ring != 4)
            }
        }
    }

    private mutating func drawAlignment(centerX: Int, centerY: Int) {
        for dy in -2...2 {
            for dx in -2...2 {
                setFunction(centerX + dx, centerY + dy, max(abs(dx), abs(dy)) != 1)
            }
        }
    }

    // MARK: - Format information (§7.9)

    /// Writes the format word for `level` and `mask` into both copies.
    mutating func drawFormat(level: QRErrorCorrectionLevel, mask: QRMask) {
        drawFormatWord(QRFormatInformation.formatWord(level: level, mask: mask))
    }

    /// Bit 0 is the least significant. First copy: bits 0–7 up column 8 next to the top-left
    /// finder (skipping the timing row), bits 8–14 along row 8 leftwards (skipping the timing
    /// column). Second copy: bits 0–7 along row 8 from the right edge, bits 8–14 down
    /// column 8 to the bottom edge, below the always-dark module.
    private mutating func drawFormatWord(_ word: Int) {
        func bit(_ index: Int) -> Bool { (word >> index) & 1 == 1 }
        for index in 0..<6 { setFunction(8, index, bit(index)) }
        setFunction(8, 7, bit(6))
        setFunction(8, 8, bit(7))
        setFunction(7, 8, bit(8))
        for index in 9..<15 { setFunction(14 - index, 8, bit(index)) }
        for index in 0..<8 { setFunction(size - 1 - index, 8, bit(index)) }
        for index in 8..<15 { setFunction(8, size - 15 + index, bit(index)) }
        setFunction(8, size - 8, true)  // the dark module (§7.9.1)
    }

    // MARK: - Codeword placement (§7.7.3)

    /// Places `codewords` most significant bit first in two-module-wide columns, starting at
    /// the bottom-right corner, going up then down alternately, skipping function modules
    /// and the vertical timing column. Modules left over (remainder bits) stay light.
    mutating func placeCodewords(_ codewords: [UInt8]) {
        let bitCount = codewords.count * 8
        var bitIndex = 0
        var right = size - 1
        var upward = true
        while right >= 1 {
            if right == 6 { right = 5 }
            for step in 0..<size {
                let y = upward ? size - 1 - step : step
                for x in [right, right - 1] where !isFunction[y * size + x] {
                    if bitIndex < bitCount {
                        modules[y * size + x] = (codewords[bitIndex >> 3] >> (7 - (bitIndex & 7))) & 1 == 1
                        bitIndex += 1
                    }
                }
            }
            right -= 2
            upward.toggle()
        }
    }

    /// Flips every non-function module that `mask` selects.
    mutating func apply(_ mask: QRMask) {
        for y in 0..<size {
            for x in 0..<size where !isFunction[y * size + x] && mask.flips(row: y, column: x) {
                modules[y * size + x].toggle()
            }
        }
    }
}
