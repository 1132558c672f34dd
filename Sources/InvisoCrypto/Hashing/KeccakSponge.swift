/// The sponge construction over Keccak-f[1600] (FIPS 202 sections 4 and 5.1), with the
/// domain-separation suffix of FIPS 202 section 6.
///
/// A sponge first absorbs: message bytes are XORed into the first `rate` bytes of the state,
/// and the state is permuted after every full block. The first squeeze pads the message with
/// the suffix bits and pad10*1, permutes, and switches the sponge to squeezing: output bytes
/// are read from the first `rate` bytes of the state, permuting between blocks. Absorbing and
/// squeezing both work on byte strings of any length, split in any way.
///
/// Absorbing after squeezing has started is a programming error and traps.
package struct KeccakSponge: Sendable {
    private var state: KeccakState
    /// The rate r in bytes: how many state bytes each block absorbs or squeezes.
    package let rate: Int
    /// The suffix bits followed by the first bit of pad10*1, as one byte (bit 0 first).
    private let suffix: UInt8
    /// Absorbing: the bytes of the current block absorbed so far (0..<rate).
    /// Squeezing: the bytes of the current block already output (0...rate).
    private var position: Int
    /// Whether the message has been padded and output has begun.
    package private(set) var isSqueezing: Bool

    /// Creates an empty sponge.
    ///
    /// - Parameters:
    ///   - rate: The rate in bytes: a multiple of 8 below 200 (136 for SHA3-256 and SHAKE256,
    ///     72 for SHA3-512, 168 for SHAKE128).
    ///   - suffix: The domain-separation bits followed by the first `1` of pad10*1, packed
    ///     into one byte from bit 0 up (FIPS 202 Appendix B.2): `0x06` for SHA3 (`01` then
    ///     `1`), `0x1F` for SHAKE (`1111` then `1`). The final `1` of pad10*1 (0x80 in the last
    ///     byte of the block) is added by the sponge.
    package init(rate: Int, suffix: UInt8) {
        precondition(rate > 0 && rate < KeccakState.byteCount && rate % 8 == 0, "invalid Keccak rate")
        precondition(suffix != 0 && suffix < 0x80, "invalid Keccak domain suffix")
        self.state = KeccakState()
        self.rate = rate
        self.suffix = suffix
        self.position = 0
        self.isSqueezing = false
    }

    /// Absorbs the bytes in `bytes`. Traps if squeezing has started.
    package mutating func absorb(_ bytes: UnsafeRawBufferPointer) {
        precondition(!isSqueezing, "Keccak sponge: cannot absorb after squeezing has started")
        guard var source = bytes.baseAddress, !bytes.isEmpty else { return }
        var remaining = bytes.count
        if position > 0 {
            // Complete the partly absorbed block.
            let count = min(rate &- position, remaining)
            state.xor(source, count: count, at: position)
            position &+= count
            source += count
            remaining &-= count
            guard position == rate else { return }
            state.permute()
            position = 0
        }
        while remaining >= rate {
            state.xor(source, count: rate, at: 0)
            state.permute()
            source += rate
            remaining &-= rate
        }
        if remaining > 0 {
            state.xor(source, count: remaining, at: 0)
            position = remaining
        }
    }

    /// Writes the next `output.count` bytes of output to `output`, padding the message first
    /// if this is the first squeeze.
    package mutating func squeeze(into output: UnsafeMutableRawBufferPointer) {
        if !isSqueezing {
            pad()
        }
        guard var destination = output.baseAddress, !output.isEmpty else { return }
        var remaining = output.count
        while remaining > 0 {
            if position == rate {
                state.permute()
                position = 0
            }
            let count = min(rate &- position, remaining)
            state.copyBytes(to: destination, count: count, from: position)
            position &+= count
            destination += count
            remaining &-= count
        }
    }

    /// Returns the next `count` bytes of output (`count` >= 0), padding the message first if
    /// this is the first squeeze.
    package mutating func squeeze(_ count: Int) -> [UInt8] {
        precondition(count >= 0, "Keccak sponge: negative output length")
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initializedCount in
            squeeze(into: UnsafeMutableRawBufferPointer(buffer))
            initializedCount = count
        }
    }

    /// Appends the suffix and pad10*1 to the absorbed message, absorbs that final block and
    /// starts squeezing at the beginning of the state.
    private mutating func pad() {
        // position < rate here: a full block is always permuted as soon as it is complete, so
        // a message whose length is a multiple of the rate gets a whole block of padding.
        state.xor(byte: suffix, at: position)
        state.xor(byte: 0x80, at: rate &- 1)
        state.permute()
        position = 0
        isSqueezing = true
    }
}
