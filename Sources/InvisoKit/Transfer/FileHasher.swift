import Crypto
import Dispatch
import Foundation

/// The SHA-256 of a file's bytes, fed in order and computed on a thread of its own.
///
/// Hashing is the largest single cost of a transfer (about a third of either side's
/// cycles, `docs/protocol.md`, "Files"), and a session's work runs on one event loop: fed
/// here, it runs beside the sealing, the socket and the disk instead of between them.
///
/// ``update(_:)`` hands a block over and returns at once unless more than ``maxBacklog``
/// bytes wait to be hashed; then it waits for the hash to catch up, so a hash slower than
/// the transfer bounds memory instead of queueing the file. ``finalize()`` waits for the
/// backlog (at most ``maxBacklog``: milliseconds).
final class FileHasher: @unchecked Sendable {
    /// Bytes handed over and not yet hashed, at most.
    static let maxBacklog = 16 << 20

    /// Runs the hashing, one block at a time, in order.
    private let queue = DispatchQueue(label: "inviso.file-hash")
    /// Touched only on `queue` (each access checks it): the queue is its lock.
    private var hasher = SHA256()
    /// Guards `backlog`.
    private let condition = NSCondition()
    /// Bytes handed over and not yet hashed (guarded by `condition`).
    private var backlog = 0

    init() {}

    /// Adds `block` to the hash (after every block handed over before it).
    func update(_ block: Data) {
        guard !block.isEmpty else { return }
        condition.lock()
        while backlog > Self.maxBacklog { condition.wait() }
        backlog += block.count
        condition.unlock()
        queue.async { [self] in hash(block) }
    }

    /// The SHA-256 of every block handed over so far.
    func finalize() -> [UInt8] {
        queue.sync {
            dispatchPrecondition(condition: .onQueue(queue))
            return Array(hasher.finalize())
        }
    }

    private func hash(_ block: Data) {
        dispatchPrecondition(condition: .onQueue(queue))
        hasher.update(data: block)
        condition.lock()
        backlog -= block.count
        condition.broadcast()
        condition.unlock()
    }
}
