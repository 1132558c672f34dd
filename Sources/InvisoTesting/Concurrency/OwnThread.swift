import Foundation

/// Runs CPU-heavy test work on a thread of its own and returns its result.
///
/// Swift's cooperative pool has as many threads as the machine has cores: a test that
/// computes for seconds on one of them (a large simulation, a vector file) holds it, and on
/// a two-core host the servers, clients and timers of every other test running in parallel
/// queue behind it. On its own thread the work shares the CPU through the OS scheduler
/// instead. Keep `#expect` outside `body` (it records against the test running the caller):
/// return what to check.
package func onOwnThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.stackSize = 16 << 20
        thread.start()
    }
}
