import Foundation
import ArgumentParser

/// A rate in bytes per second as a user writes it: `500K`, `8M`, `1G` (powers of 1024)
/// or a plain number of bytes.
struct ByteRate: ExpressibleByArgument, Equatable {
    /// Bytes per second.
    let bytesPerSecond: UInt64

    init(bytesPerSecond: UInt64) { self.bytesPerSecond = bytesPerSecond }

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces).uppercased()
        let units: [Character: UInt64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        var digits = Substring(text)
        var unit: UInt64 = 1
        if let last = digits.last, let scale = units[last] {
            unit = scale
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let value = UInt64(digits), value > 0 else { return nil }
        let (product, overflow) = value.multipliedReportingOverflow(by: unit)
        guard !overflow else { return nil }
        bytesPerSecond = product
    }

    static var defaultCompletionKind: CompletionKind { .default }
}
