import InvisoKit
import Synchronization
import Testing

/// Collects a client's events so tests can wait for one with a timeout.
final class EventLog: Sendable {
    private let consumed = Mutex(0)
    let reader: Task<Void, Never>

    init(_ client: SignalingClient) {
        let box = Box()
        reader = Task { [box] in
            for await event in client.events { box.append(event) }
            box.finish()
        }
        self.box = box
    }

    private let box: Box

    final class Box: Sendable {
        let events = Mutex<(list: [SignalingEvent], finished: Bool)>(([], false))
        func append(_ event: SignalingEvent) { events.withLock { $0.list.append(event) } }
        func finish() { events.withLock { $0.finished = true } }
    }

    /// Every event so far.
    var all: [SignalingEvent] { box.events.withLock { $0.list } }
    var finished: Bool { box.events.withLock { $0.finished } }

    /// Waits for the next event (after those already taken) matching `predicate`; events
    /// skipped on the way are taken too.
    @discardableResult
    func next(
        timeout seconds: Double = 60, sourceLocation: SourceLocation = #_sourceLocation,
        where predicate: (SignalingEvent) -> Bool
    ) async throws -> SignalingEvent {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            let list = all
            var index = consumed.withLock { $0 }
            while index < list.count {
                let event = list[index]
                index += 1
                if predicate(event) {
                    consumed.withLock { $0 = index }
                    return event
                }
            }
            consumed.withLock { $0 = index }
            guard ContinuousClock.now < deadline else {
                throw NetworkTestFailure("no matching event within \(seconds) s; got \(list)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Waits until the stream finished.
    func waitUntilFinished(timeout seconds: Double = 60) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !finished {
            guard ContinuousClock.now < deadline else { throw NetworkTestFailure("events did not finish") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
