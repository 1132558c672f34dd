/// The mask evaluation of ISO/IEC 18004 §7.8.3 (Table 11): lower is better.
///
/// Weights N1 = 3, N2 = 3, N3 = 40, N4 = 10. Rule 3 counts each dark–light–dark³–light–dark
/// (1:1:3:1:1) run in a row or column once when four light modules precede or follow it;
/// modules outside the symbol count as light, because the quiet zone is light. (Readers of
/// the standard differ here — some libraries count a run with light on both sides twice,
/// or ignore the quiet zone — so another encoder may pick a different mask for the same
/// data; every mask yields a valid symbol.)
struct QRPenalty: Sendable, Hashable {
    /// Rule 1: runs of five or more same-coloured modules in a row or column: 3 + (run − 5) each.
    var runs = 0
    /// Rule 2: 2×2 blocks of one colour: 3 each (overlapping blocks all count).
    var blocks = 0
    /// Rule 3: finder-like 1:1:3:1:1 patterns with four light modules on a side: 40 each.
    var finderLike = 0
    /// Rule 4: 10 for each full 5 % the dark proportion deviates from 50 %.
    var balance = 0

    /// The total penalty.
    var total: Int { runs + blocks + finderLike + balance }

    /// Scores the symbol whose row-major modules (`true` = dark) are `modules`.
    init(size: Int, modules: [Bool]) {
        precondition(modules.count == size * size, "modules do not match the size")
        func dark(_ x: Int, _ y: Int) -> Bool { modules[y * size + x] }
        for line in 0..<size {
            runs += Self.runPenalty(size) { dark($0, line) }
            runs += Self.runPenalty(size) { dark(line, $0) }
            finderLike += Self.finderPenalty(size) { dark($0, line) }
            finderLike += Self.finderPenalty(size) { dark(line, $0) }
        }
        for y in 0..<(size - 1) {
            for x in 0..<(size - 1) {
                let colour = dark(x, y)
                if dark(x + 1, y) == colour, dark(x, y + 1) == colour, dark(x + 1, y + 1) == colour { blocks += 3 }
            }
        }
        let darkCount = modules.count { $0 }
        let total = size * size
        balance = 10 * (abs(20 * darkCount - 10 * total) / total)
    }

    /// Rule 1 for one line, read through `module`.
    private static func runPenalty(_ size: Int, _ module: (Int) -> Bool) -> Int {
        var penalty = 0
        var runLength = 1
        for index in 1...size {
            if index < size && module(index) == module(index - 1) {
                runLength += 1
            } else {
                if runLength >= 5 { penalty += 3 + runLength - 5 }
                runLength = 1
            }
        }
        return penalty
    }

    /// Rule 3 for one line, read through `module`; positions outside `0..<size` are light.
    private static func finderPenalty(_ size: Int, _ module: (Int) -> Bool) -> Int {
        let pattern = [true, false, true, true, true, false, true]
        func at(_ index: Int) -> Bool { (0..<size).contains(index) ? module(index) : false }
        var penalty = 0
        for start in 0...(size - pattern.count) where pattern.indices.allSatisfy({ at(start + $0) == pattern[$0] }) {
            let lightBefore = (1...4).allSatisfy { !at(start - $0) }
            let lightAfter = (0..<4).allSatisfy { !at(start + pattern.count + $0) }
            if lightBefore || lightAfter { penalty += 40 }
        }
        return penalty
    }
}
