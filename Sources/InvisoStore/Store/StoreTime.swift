import Foundation

/// Times in the store's columns: whole milliseconds since 1970 (rounded; clamped to Int64).
enum StoreTime {
    static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        if value.isNaN { return 0 }
        return Int64(exactly: value) ?? (value < 0 ? .min : .max)
    }

    static func date(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
