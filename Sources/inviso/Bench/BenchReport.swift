import Foundation

/// Prints benchmark results: an aligned table, or one JSON object per line
/// (`name`, `value`, `unit`, `baseline`, `ratio`) with `--json`.
struct BenchReport {
    var json: Bool

    /// The table header (nothing in JSON mode).
    func header() {
        guard !json else { return }
        JSONLines.emitLine(Self.row("benchmark", "ours", "baseline", "unit", "ratio"))
    }

    /// One result line.
    func emit(_ result: BenchResult) {
        if json {
            JSONLines.emit([
                "name": .string(result.name),
                "value": .double(Self.rounded(result.value)),
                "unit": .string(result.unit),
                "baseline": .double(Self.rounded(result.baseline)),
                "ratio": .double((result.ratio * 1000).rounded() / 1000),
            ])
        } else {
            JSONLines.emitLine(
                Self.row(
                    result.name, Self.format(result.value), Self.format(result.baseline), result.unit,
                    String(format: "%.3f", result.ratio)))
        }
    }

    /// Four significant figures are plenty for a benchmark.
    private static func rounded(_ value: Double) -> Double {
        guard value > 0, value.isFinite else { return value }
        let scale = pow(10, 3 - floor(log10(value)))
        return (value * scale).rounded() / scale
    }

    private static func format(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f", value) : String(format: "%.2f", value)
    }

    private static func row(_ name: String, _ ours: String, _ baseline: String, _ unit: String, _ ratio: String) -> String {
        func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
            let fill = String(repeating: " ", count: max(0, width - text.count))
            return left ? fill + text : text + fill
        }
        return pad(name, 52) + pad(ours, 12, left: true) + pad(baseline, 12, left: true) + "  " + pad(unit, 13)
            + pad(ratio, 6, left: true)
    }
}
