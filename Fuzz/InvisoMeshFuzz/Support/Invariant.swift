/// Stops the process when a property of the library does not hold.
///
/// This is `precondition` that keeps its message in optimised builds (the fuzzer runs a
/// release build, where `precondition` traps without saying which check failed). The trap
/// is what libFuzzer reports as a crash.
func invariant(
    _ condition: @autoclosure () -> Bool,
    _ message: @autoclosure () -> String,
    file: StaticString = #fileID,
    line: UInt = #line
) {
    if !condition() {
        fatalError("invariant violated: \(message())", file: file, line: line)
    }
}

/// Runs an operation that must succeed (re-encoding what was just decoded); any error is a
/// finding.
func mustSucceed<Result>(
    _ what: @autoclosure () -> String,
    file: StaticString = #fileID,
    line: UInt = #line,
    _ body: () throws -> Result
) -> Result {
    do {
        return try body()
    } catch {
        fatalError("invariant violated: \(what()) failed with \(error)", file: file, line: line)
    }
}
