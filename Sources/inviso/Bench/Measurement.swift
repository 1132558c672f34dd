#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Folds benchmark results into a value the optimiser cannot prove unused.
nonisolated(unsafe) var benchmarkSink: UInt64 = 0

@inline(never)
func consume(_ value: UInt8) {
    benchmarkSink &+= UInt64(value)
}

/// Monotonic time in seconds.
func monotonicSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) * 1e-9
}

/// This thread's CPU time in seconds (excludes time the thread waited for a core).
func threadCPUSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) * 1e-9
}

/// A measured operation: `body(n)` performs it `n` times (keeping any state in locals
/// for the duration of the batch), and each time counts as `workPerCall` units of work
/// (bytes, handshakes, …).
struct BenchOperation {
    var workPerCall: Double
    var body: (Int) -> Void
}

/// One result line: our implementation against a baseline measured in the same run.
struct BenchResult {
    var name: String
    /// Median rate of our implementation over the rounds.
    var value: Double
    var unit: String
    /// Median rate of the baseline over the rounds.
    var baseline: Double
    /// Median over the rounds of (ours / baseline) within each round: each pair is measured
    /// back to back, so slow drifts in machine load cancel out.
    var ratio: Double
}

/// The rates of one comparison.
struct BenchComparison {
    var ours: Double
    var baseline: Double
    var ratio: Double
}

/// Measures two operations in interleaved rounds so that drifting machine load hits both
/// alike, and reports the median rate of each.
enum Bench {
    /// - Parameters:
    ///   - seconds: measuring time per operation (split over `rounds`).
    ///   - rounds: how many alternating rounds; the order flips every round.
    static func compare(ours: BenchOperation, baseline: BenchOperation, seconds: Double, rounds: Int) -> BenchComparison {
        // Warm up both (caches, lazy initialisation, branch predictors).
        _ = rate(of: baseline, for: min(0.05, seconds / Double(rounds)))
        _ = rate(of: ours, for: min(0.05, seconds / Double(rounds)))
        let slice = seconds / Double(rounds)
        var oursRates: [Double] = []
        var baselineRates: [Double] = []
        for round in 0..<rounds {
            if round % 2 == 0 {
                baselineRates.append(rate(of: baseline, for: slice))
                oursRates.append(rate(of: ours, for: slice))
            } else {
                oursRates.append(rate(of: ours, for: slice))
                baselineRates.append(rate(of: baseline, for: slice))
            }
        }
        let ratios = zip(oursRates, baselineRates).map { $1 > 0 ? $0 / $1 : 0 }
        return BenchComparison(ours: median(oursRates), baseline: median(baselineRates), ratio: median(ratios))
    }

    /// Runs `operation` in growing batches for about `duration` seconds; work per second.
    static func rate(of operation: BenchOperation, for duration: Double) -> Double {
        var calls = 0
        var batch = 1
        let start = monotonicSeconds()
        var elapsed = 0.0
        while true {
            operation.body(batch)
            calls += batch
            elapsed = monotonicSeconds() - start
            if elapsed >= duration { break }
            // Aim for roughly 20 clock reads per slice.
            if elapsed < duration / 20 { batch *= 2 }
        }
        return Double(calls) * operation.workPerCall / elapsed
    }

    /// Seconds of this thread's CPU time per call of each operation: `calls` calls in
    /// alternating batches of a tenth, after a warm-up.
    static func cpuTimes(ours: BenchOperation, baseline: BenchOperation, calls: Int) -> (ours: Double, baseline: Double) {
        ours.body(calls / 10)
        baseline.body(calls / 10)
        var spent = (ours: 0.0, baseline: 0.0)
        for _ in 0..<10 {
            var start = threadCPUSeconds()
            baseline.body(calls / 10)
            spent.baseline += threadCPUSeconds() - start
            start = threadCPUSeconds()
            ours.body(calls / 10)
            spent.ours += threadCPUSeconds() - start
        }
        let total = Double(calls / 10 * 10)
        return (spent.ours / total, spent.baseline / total)
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
