import ArgumentParser

/// The options every `inviso bench` command takes, and what follows from them.
struct BenchOptions: ParsableArguments {
    @Flag(help: "One JSON object per line: name, value, unit, baseline, ratio.")
    var json = false

    @Option(help: "Measuring time per figure and per side, in seconds.")
    var seconds = 1.0

    @Option(help: "Alternating rounds per figure (the median is reported).")
    var rounds = 7

    @Option(help: "Run only the figures whose name contains this text (see the command's figure names).")
    var filter: String?

    func validate() throws {
        guard seconds > 0, seconds.isFinite else { throw ValidationError("--seconds must be positive") }
        guard rounds >= 1 else { throw ValidationError("--rounds must be at least 1") }
    }

    /// Whether the figure called `name` passes `--filter`.
    func selected(_ name: String) -> Bool {
        filter.map { name.contains($0) } ?? true
    }

    /// The table or JSON-lines printer `--json` asks for.
    var report: BenchReport { BenchReport(json: json) }

    /// ``Bench/compare(ours:baseline:seconds:rounds:)`` with `--seconds` and `--rounds`.
    func compare(ours: BenchOperation, baseline: BenchOperation) -> BenchComparison {
        Bench.compare(ours: ours, baseline: baseline, seconds: seconds, rounds: rounds)
    }
}
