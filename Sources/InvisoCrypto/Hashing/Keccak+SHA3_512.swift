public import Crypto
public import Foundation

extension Keccak {
    /// SHA3-512 (FIPS 202 section 6.1): a 64-byte digest, Keccak[1024] with the suffix `01`.
    ///
    /// An incremental hasher: feed it bytes with ``update(_:)`` or ``update(bufferPointer:)``
    /// in any number of pieces, then read the digest with `finalize()`. Copying the hasher
    /// forks the computation, and `finalize()` does not change it.
    ///
    /// It also conforms to swift-crypto's `HashFunction` (digest type ``SHA3_512Digest``), so
    /// `HMAC<Keccak.SHA3_512>` works.
    public struct SHA3_512: Sendable {
        /// The length of a SHA3-512 digest: 64 bytes.
        public static let byteCount = 64

        // Rate r = 1600 - 2 * 512 bits = 72 bytes; suffix 01, then pad10*1's first 1.
        static let rate = 72
        private var sponge: KeccakSponge

        /// Creates a hasher for an empty message.
        public init() {
            sponge = KeccakSponge(rate: Self.rate, suffix: 0x06)
        }

        /// Computes the SHA3-512 digest of `data` in one call.
        ///
        /// - Parameter data: The bytes to hash.
        /// - Returns: The 64 digest bytes.
        public static func hash(_ data: some ContiguousBytes) -> [UInt8] {
            var hasher = Self()
            hasher.update(data)
            return hasher.finalize()
        }

        /// Adds `bytes` to the message being hashed.
        public mutating func update(_ bytes: some ContiguousBytes) {
            bytes.withUnsafeBytes { sponge.absorb($0) }
        }

        /// Adds the bytes in `bufferPointer` to the message being hashed. The pointer is not
        /// retained.
        public mutating func update(bufferPointer: UnsafeRawBufferPointer) {
            sponge.absorb(bufferPointer)
        }

        /// Returns the 64-byte digest of everything added so far.
        ///
        /// The hasher is left unchanged, so more bytes may be added and `finalize()` called
        /// again for the digest of the longer message.
        public func finalize() -> [UInt8] {
            var copy = sponge
            return copy.squeeze(Self.byteCount)
        }
    }
}

// MARK: - Redacted descriptions

extension Keccak.SHA3_512: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `Keccak.SHA3_512()`: never the absorbed bytes or the state, which may derive from secrets.
    public var description: String { "Keccak.SHA3_512()" }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror with no children, so `dump` and reflection show no state.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

// MARK: - HashFunction

extension Keccak.SHA3_512: HashFunction {
    /// The SHA3-512 rate, 72 bytes: the block size HMAC pads its key to, as for swift-crypto's own SHA-3.
    public static var blockByteCount: Int { rate }

    /// The digest type of the `HashFunction` conformance.
    public typealias Digest = Keccak.SHA3_512Digest

    /// Returns the digest of everything added so far, as a ``Keccak/SHA3_512Digest``.
    ///
    /// This is the `HashFunction` requirement. Without a type context, `finalize()` picks the
    /// `[UInt8]` overload.
    @_disfavoredOverload
    public func finalize() -> Keccak.SHA3_512Digest {
        var copy = sponge
        var digest = Keccak.SHA3_512Digest()
        digest.withUnsafeMutableBytes { copy.squeeze(into: $0) }
        return digest
    }
}

// MARK: - Digest

extension Keccak {
    /// A 64-byte SHA3-512 digest, the output of ``SHA3_512``'s `HashFunction` conformance.
    ///
    /// Equality is checked in constant time. The bytes are stored inline.
    public struct SHA3_512Digest: Crypto.Digest {
        // The digest bytes, in order, in memory.
        private var storage: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)

        /// The length of a SHA3-512 digest: 64 bytes.
        public static var byteCount: Int { 64 }

        fileprivate init() {}

        fileprivate mutating func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) -> R) -> R {
            Swift.withUnsafeMutableBytes(of: &storage, body)
        }

        /// Calls `body` with the 64 digest bytes.
        public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            var copy = storage
            return try Swift.withUnsafeBytes(of: &copy) { try body($0) }
        }

        /// Iterates over the 64 digest bytes.
        public func makeIterator() -> Array<UInt8>.Iterator {
            withUnsafeBytes { Array($0) }.makeIterator()
        }

        /// The digest in lowercase hexadecimal, prefixed with the type name.
        public var description: String {
            "SHA3_512Digest: \(withUnsafeBytes { Hex.encode($0) })"
        }

        /// Compares two digests in constant time.
        public static func == (lhs: SHA3_512Digest, rhs: SHA3_512Digest) -> Bool {
            lhs.withUnsafeBytes { a in rhs.withUnsafeBytes { b in ConstantTime.equals(a, b) } }
        }

        /// Feeds the digest bytes to `hasher`.
        public func hash(into hasher: inout Hasher) {
            withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }
}
