/// Stops the process when a property of the library does not hold.
///
/// This is `precondition` that keeps its message in optimised builds (the fuzzer runs a
/// release build, where `precondition` traps without saying which check failed). The trap
/// is what libFuzzer reports as a crash.
package func invariant(
    _ condition: @autoclosure () -> Bool,
    _ message: @autoclosure () -> String,
    file: StaticString = #fileID,
    line: UInt = #line
) {
    if !condition() {
        fatalError("invariant violated: \(message())", file: file, line: line)
    }
}

/// Runs an operation that must succeed on genuine input (parsing a fixture, re-encoding what
/// was just decoded); any error is a finding.
package func mustSucceed<Result, Failure: Error>(
    _ what: @autoclosure () -> String,
    file: StaticString = #fileID,
    line: UInt = #line,
    _ body: () throws(Failure) -> Result
) -> Result {
    do {
        return try body()
    } catch {
        fatalError("invariant violated: \(what()) failed with \(error)", file: file, line: line)
    }
}
