/// A small container for secret bytes: keys, chaining keys, pre-shared keys.
///
/// `SecretBytes` owns its storage, wipes it when the last copy goes away, compares in
/// constant time, and never prints its contents (`description` is redacted). Bytes are
/// reachable only through ``withUnsafeBytes(_:)``.
public struct SecretBytes: Sendable {
    @usableFromInline let storage: Storage

    /// Creates a container holding a copy of `bytes`.
    ///
    /// Contiguous bytes (arrays, slices, `Data`, buffers) are copied straight into the
    /// container; any other sequence through an array that is wiped afterwards. Inlinable,
    /// so that each caller gets a copy for its own type: a generic call across modules makes
    /// the runtime look the sequence's conformances up by name, which costs a process's first
    /// handshake a scan of every conformance record in the binary.
    @inlinable
    public init<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if let storage = bytes.withContiguousStorageIfAvailable({ Storage(copying: UnsafeRawBufferPointer($0)) }) {
            self.storage = storage
        } else {
            var copy = Array(bytes)
            self.storage = Storage(wipingAfterCopy: &copy)
        }
    }

    /// Creates a container of `count` zero bytes, then lets `body` fill it in place.
    public init(count: Int, initializingWith body: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        let storage = Storage(count: count)
        try body(storage.mutableBuffer)
        self.storage = storage
    }

    /// Creates a container of `count` bytes drawn from `generator`.
    public init<Generator: RandomNumberGenerator>(randomCount count: Int, using generator: inout Generator) {
        let storage = Storage(count: count)
        let buffer = storage.mutableBuffer
        var index = 0
        while index < count {
            var word = generator.next()
            for _ in 0..<8 where index < count {
                buffer[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
        self.storage = storage
    }

    /// The number of bytes held.
    @inlinable
    public var count: Int { storage.count }

    /// Calls `body` with a read-only view of the secret bytes. Do not let the pointer escape.
    @inlinable
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(storage.mutableBuffer))
    }
}

// MARK: - Equatable (constant time)

extension SecretBytes: Equatable {
    /// Compares two secrets in time that depends only on their lengths.
    public static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool {
        lhs.withUnsafeBytes { a in rhs.withUnsafeBytes { b in ConstantTime.equals(a, b) } }
    }
}

// MARK: - Redacted descriptions

extension SecretBytes: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Always `SecretBytes(<redacted N bytes>)`: the contents never reach a log.
    public var description: String { "SecretBytes(<redacted \(count) bytes>)" }
    /// Same as ``description``.
    public var debugDescription: String { description }
    /// A mirror with no children, so `dump` and reflection show nothing secret.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

// MARK: - Storage

extension SecretBytes {
    /// Heap storage shared by copies of a `SecretBytes` value; immutable after initialisation
    /// (only the initialisers above write to it, before the value is published), which is
    /// what makes the `@unchecked Sendable` sound.
    @usableFromInline
    final class Storage: @unchecked Sendable {
        private let allocation: UnsafeMutableRawBufferPointer
        @usableFromInline let mutableBuffer: UnsafeMutableRawBufferPointer
        @usableFromInline var count: Int { mutableBuffer.count }

        init(count: Int) {
            precondition(count >= 0, "negative byte count")
            allocation = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
            allocation.initializeMemory(as: UInt8.self, repeating: 0)
            mutableBuffer = UnsafeMutableRawBufferPointer(rebasing: allocation[0..<count])
        }

        @usableFromInline
        convenience init(copying bytes: UnsafeRawBufferPointer) {
            self.init(count: bytes.count)
            if !bytes.isEmpty { mutableBuffer.copyMemory(from: bytes) }
        }

        /// Copies `bytes`, then overwrites them with zeros.
        @usableFromInline
        convenience init(wipingAfterCopy bytes: inout [UInt8]) {
            self.init(count: bytes.count)
            bytes.withUnsafeMutableBytes { source in
                if !source.isEmpty { mutableBuffer.copyMemory(from: UnsafeRawBufferPointer(source)) }
                SecureWipe.wipe(source)
            }
        }

        deinit {
            SecureWipe.wipe(allocation)
            allocation.deallocate()
        }
    }
}
