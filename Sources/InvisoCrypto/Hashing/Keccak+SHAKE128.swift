public import Foundation

extension Keccak {
    /// SHAKE128 (FIPS 202 section 6.2): the extendable-output function Keccak[256] with the
    /// suffix `1111`, output of any length, with security strength up to 128 bits (FIPS 202 Table 4).
    ///
    /// First absorb the input with ``update(_:)`` or ``update(bufferPointer:)``, in any
    /// number of pieces; then read output with ``squeeze(_:)`` or ``squeeze(into:)``, as often
    /// and in pieces of any size: the pieces concatenate to the same stream as one
    /// long squeeze. The first squeeze ends the input. Calling `update` after that is a
    /// programming error and traps, because a sponge cannot absorb once it has been padded.
    ///
    /// Copying the value forks it: both copies continue from the same point, absorbing or
    /// squeezing.
    public struct SHAKE128: Sendable {
        /// The SHAKE128 rate, 168 bytes: output is produced, and input absorbed, in blocks of
        /// this size.
        public static let blockByteCount = 168

        private var sponge: KeccakSponge

        /// Creates an XOF with no input absorbed yet.
        public init() {
            sponge = KeccakSponge(rate: Self.blockByteCount, suffix: 0x1F)
        }

        /// Computes the first `outputByteCount` bytes of SHAKE128(`data`) in one call.
        ///
        /// - Parameters:
        ///   - data: The input bytes.
        ///   - outputByteCount: How many output bytes to produce; must not be negative.
        /// - Returns: `outputByteCount` bytes. A shorter output is a prefix of a longer one.
        public static func hash(_ data: some ContiguousBytes, outputByteCount: Int) -> [UInt8] {
            var xof = Self()
            xof.update(data)
            return xof.squeeze(outputByteCount)
        }

        /// Absorbs `bytes`. Traps if squeezing has started.
        public mutating func update(_ bytes: some ContiguousBytes) {
            bytes.withUnsafeBytes { sponge.absorb($0) }
        }

        /// Absorbs the bytes in `bufferPointer`; the pointer is not retained. Traps if squeezing
        /// has started.
        public mutating func update(bufferPointer: UnsafeRawBufferPointer) {
            sponge.absorb(bufferPointer)
        }

        /// Returns the next `count` output bytes, ending the input on the first call.
        ///
        /// - Parameter count: How many bytes to produce; must not be negative. Zero returns
        ///   nothing but still ends the input.
        public mutating func squeeze(_ count: Int) -> [UInt8] {
            sponge.squeeze(count)
        }

        /// Fills `buffer` with the next `buffer.count` output bytes, ending the input on the
        /// first call. Nothing is allocated; the pointer is not retained.
        public mutating func squeeze(into buffer: UnsafeMutableRawBufferPointer) {
            sponge.squeeze(into: buffer)
        }
    }
}

// MARK: - Redacted descriptions

extension Keccak.SHAKE128: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `Keccak.SHAKE128(absorbing)` or `Keccak.SHAKE128(squeezing)`: never the input, the
    /// output or the state, which may derive from secrets.
    public var description: String {
        "Keccak.SHAKE128(\(sponge.isSqueezing ? "squeezing" : "absorbing"))"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror with no children, so `dump` and reflection show no state.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
