public import Foundation
import Synchronization

/// The join codes each source created that are still live (not expired, not accepted),
/// so one source cannot fill the code space: at most ``limit`` at once.
///
/// A creation first reserves a place (``reserve(_:now:)``, checked and counted in one
/// step, so concurrent creations cannot overshoot), then names the code it got
/// (``Reservation/commit(code:expiresAt:)``) or gives the place back. A code leaves the
/// ledger when it is accepted (``release(code:)``) or expires. Kept in this instance's
/// memory: with several instances on one PostgreSQL each counts its own clients.
public final class LiveCodeLedger: Sendable {
    /// A reserved place for one code.
    public struct Reservation: Sendable {
        let ledger: LiveCodeLedger
        let source: String
        let placeholder: String

        /// The code was created: it counts until `expiresAt` or until it is accepted.
        public func commit(code: String, expiresAt: Date) {
            ledger.state.withLock { state in
                state.bySource[source]?[placeholder] = nil
                state.bySource[source, default: [:]][code] = expiresAt
                state.sourceOfCode[code] = source
            }
        }

        /// The creation failed: the place is free again.
        public func cancel() {
            ledger.state.withLock { state in
                state.bySource[source]?[placeholder] = nil
                if state.bySource[source]?.isEmpty == true { state.bySource[source] = nil }
            }
        }
    }

    private struct State: ~Copyable {
        var bySource: [String: [String: Date]] = [:]
        var sourceOfCode: [String: String] = [:]
        var nextPlaceholder: UInt64 = 1
    }

    /// Live codes one source may hold.
    public let limit: Int
    private let state = Mutex<State>(State())

    /// Creates a ledger allowing `limit` live codes per source.
    public init(limit: Int) {
        self.limit = limit
    }

    /// Reserves a place for a new code from `source` at `now`; `nil` when the source holds
    /// `limit` live codes already.
    public func reserve(_ source: String, now: Date) -> Reservation? {
        state.withLock { state -> Reservation? in
            var codes = (state.bySource[source] ?? [:]).filter { $0.value > now }
            for (code, _) in state.bySource[source] ?? [:] where codes[code] == nil && state.sourceOfCode[code] == source {
                state.sourceOfCode[code] = nil
            }
            guard codes.count < limit else {
                state.bySource[source] = codes
                return nil
            }
            let placeholder = "#\(state.nextPlaceholder)"
            state.nextPlaceholder += 1
            codes[placeholder] = now.addingTimeInterval(60)
            state.bySource[source] = codes
            return Reservation(ledger: self, source: source, placeholder: placeholder)
        }
    }

    /// `code` was accepted (or deleted): it no longer counts against its source.
    public func release(code: String) {
        state.withLock { state in
            guard let source = state.sourceOfCode.removeValue(forKey: code) else { return }
            state.bySource[source]?[code] = nil
            if state.bySource[source]?.isEmpty == true { state.bySource[source] = nil }
        }
    }

    /// Forgets expired codes (called periodically).
    public func prune(now: Date) {
        state.withLock { state in
            for (source, codes) in state.bySource {
                let live = codes.filter { $0.value > now }
                for (code, _) in codes where live[code] == nil && state.sourceOfCode[code] == source {
                    state.sourceOfCode[code] = nil
                }
                state.bySource[source] = live.isEmpty ? nil : live
            }
        }
    }

    /// Live codes (and reserved places) of `source` at `now`.
    public func count(_ source: String, now: Date) -> Int {
        state.withLock { $0.bySource[source]?.values.filter { $0 > now }.count ?? 0 }
    }
}
