import NIOCore
import Synchronization

/// The listener's bounded queue of inbound connections: those still handshaking (counted,
/// so they can be closed with the listener) and those authenticated and waiting for
/// ``DirectConnector`` to take them.
///
/// At most `capacity` inbound connections are held at once; ``reserve(_:)`` refuses more.
final class DirectInbox: Sendable {
    private struct State {
        var handshaking: [ObjectIdentifier: any Channel] = [:]
        var ready: [DirectConnection] = []
        var waiter: CheckedContinuation<DirectConnection?, Never>?
        var closed = false
    }

    private let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
    }

    /// Takes a slot for a new inbound channel; `false` when full or closed (close it).
    func reserve(_ channel: any Channel) -> Bool {
        state.withLock { state in
            guard !state.closed, state.handshaking.count + state.ready.count < capacity else { return false }
            state.handshaking[ObjectIdentifier(channel)] = channel
            return true
        }
    }

    /// Frees the slot of a channel whose handshake failed.
    func release(_ channel: any Channel) {
        _ = state.withLock { $0.handshaking.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// Hands over an authenticated connection; `false` when the inbox is closed (close it).
    func deliver(_ connection: DirectConnection, channel: any Channel) -> Bool {
        enum Outcome { case refused, queued, handed(CheckedContinuation<DirectConnection?, Never>) }
        let outcome: Outcome = state.withLock { state in
            state.handshaking.removeValue(forKey: ObjectIdentifier(channel))
            guard !state.closed else { return .refused }
            if let waiter = state.waiter {
                state.waiter = nil
                return .handed(waiter)
            }
            state.ready.append(connection)
            return .queued
        }
        switch outcome {
        case .refused: return false
        case .queued: return true
        case .handed(let waiter):
            waiter.resume(returning: connection)
            return true
        }
    }

    /// The next authenticated connection; `nil` when the inbox closed or the task was
    /// cancelled. One caller at a time.
    func next() async -> DirectConnection? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<DirectConnection?, Never>) in
                let immediate: DirectConnection?? = state.withLock { state in
                    if !state.ready.isEmpty { return .some(state.ready.removeFirst()) }
                    if state.closed || Task.isCancelled || state.waiter != nil { return .some(nil) }
                    state.waiter = continuation
                    return .none
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    /// Closes the inbox: ends a waiting ``next()`` and returns everything it held (the
    /// caller closes them).
    func close() -> (ready: [DirectConnection], handshaking: [any Channel]) {
        let (waiter, ready, handshaking) = state.withLock { state in
            state.closed = true
            defer {
                state.waiter = nil
                state.ready = []
                state.handshaking = [:]
            }
            return (state.waiter, state.ready, Array(state.handshaking.values))
        }
        waiter?.resume(returning: nil)
        return (ready, handshaking)
    }
}
