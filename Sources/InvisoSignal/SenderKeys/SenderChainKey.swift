package import InvisoCrypto

/// One step of a sender-key chain: the chain key at an iteration.
///
/// libsignal's KDF: message key seed = HMAC-SHA256(chainKey, `0x01`); next chain key =
/// HMAC-SHA256(chainKey, `0x02`).
package struct SenderChainKey: Sendable {
    /// The iteration of ``seed``.
    package let iteration: UInt32
    /// The 32-byte chain key.
    package let seed: SecretBytes

    /// Wraps a chain key at an iteration.
    package init(iteration: UInt32, seed: SecretBytes) {
        self.iteration = iteration
        self.seed = seed
    }

    /// The message key of this iteration.
    package var messageKey: SenderMessageKey {
        SenderMessageKey(iteration: iteration, seed: hmac(0x01))
    }

    /// The chain key of the next iteration.
    ///
    /// - Throws: ``SignalError/invalidSessionState`` when the iteration would pass `UInt32.max`.
    package func next() throws(SignalError) -> SenderChainKey {
        guard iteration < UInt32.max else { throw SignalError(.invalidSessionState, "sender chain exhausted") }
        return SenderChainKey(iteration: iteration + 1, seed: hmac(0x02))
    }

    private func hmac(_ label: UInt8) -> SecretBytes {
        hmacSHA256(key: seed, byte: label)
    }
}
