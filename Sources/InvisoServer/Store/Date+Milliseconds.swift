import Foundation

/// How both stores keep times: whole milliseconds since 1970 in a 64-bit integer column,
/// so a `Date` built from whole milliseconds (`Date(timeIntervalSince1970: 1_800_000_000.123)`)
/// reads back equal, and SQL compares times as integers.
extension Date {
    /// The date as whole milliseconds since 1970, rounded to the nearest; dates beyond
    /// ±292 million years are clamped.
    var millisecondsSince1970: Int64 {
        let milliseconds = (timeIntervalSince1970 * 1000).rounded()
        guard milliseconds.isFinite else { return milliseconds > 0 ? .max : .min }
        if milliseconds >= 9.2e18 { return .max }
        if milliseconds <= -9.2e18 { return .min }
        return Int64(milliseconds)
    }

    /// The date `milliseconds` after 1970.
    init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
