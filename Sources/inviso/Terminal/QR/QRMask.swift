/// One of the eight data mask patterns (ISO/IEC 18004 §7.8.2, Table 10). A mask flips every
/// data module where its condition holds, to break up patterns that confuse readers.
struct QRMask: Sendable, Hashable, CustomStringConvertible {
    /// Every mask, 0…7.
    static let all = (0..<8).map { QRMask(uncheckedReference: $0) }

    /// The mask pattern reference written into the format information, 0…7.
    let reference: Int

    /// The mask with `reference` 0…7, or `nil` otherwise.
    init?(_ reference: Int) {
        guard (0..<8).contains(reference) else { return nil }
        self.reference = reference
    }

    private init(uncheckedReference: Int) {
        self.reference = uncheckedReference
    }

    /// Whether the mask flips the module at row `i`, column `j` (Table 10's conditions).
    func flips(row i: Int, column j: Int) -> Bool {
        switch reference {
        case 0: (i + j) % 2 == 0
        case 1: i % 2 == 0
        case 2: j % 3 == 0
        case 3: (i + j) % 3 == 0
        case 4: (i / 2 + j / 3) % 2 == 0
        case 5: (i * j) % 2 + (i * j) % 3 == 0
        case 6: ((i * j) % 2 + (i * j) % 3) % 2 == 0
        default: ((i + j) % 2 + (i * j) % 3) % 2 == 0
        }
    }

    var description: String { "mask \(reference)" }
}
