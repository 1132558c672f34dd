package import InvisoCrypto

/// libsignal's KDF labels and limits for the Double Ratchet.
package enum RatchetConstants {
    /// HKDF info of the DH ratchet step.
    static let rootInfo = Array("WhisperRatchet".utf8)
    /// HKDF info of the per-message keys.
    static let messageKeysInfo = Array("WhisperMessageKeys".utf8)
    /// The HKDF extract key schedule of the per-message keys: the salt is always empty
    /// (32 zero bytes), so its HMAC key schedule is computed once.
    static let messageKeysExtractor = HMACSHA256(key: UnsafeRawBufferPointer(start: nil, count: 0))
    /// HKDF info of the X3DH (version 3) session secret.
    static let x3dhInfo = Array("WhisperText".utf8)
    /// HKDF info of the PQXDH (version 4) session secret.
    static let pqxdhInfo = Array("WhisperText_X25519_SHA-256_CRYSTALS-KYBER-1024".utf8)
    /// The maximum counter jump within one receiving chain.
    package static let maxForwardJumps: UInt32 = 25_000
    /// The maximum number of skipped message keys stored per receiving chain.
    package static let maxMessageKeys = 2_000
    /// The maximum number of receiving chains kept per session state.
    package static let maxReceiverChains = 5
    /// The maximum number of archived session states kept per record.
    package static let maxArchivedStates = 40
}

/// HKDF-SHA256 into `count` secret bytes.
func hkdfSHA256(ikm: SecretBytes, salt: UnsafeRawBufferPointer, info: [UInt8], count: Int) -> SecretBytes {
    SecretBytes(count: count) { output in
        ikm.withUnsafeBytes { ikm in
            info.withUnsafeBytes { info in
                HKDFSHA256.derive(inputKeyMaterial: ikm, salt: salt, info: info, into: output)
            }
        }
    }
}

/// HKDF-SHA256 without salt into `count` secret bytes.
func hkdfSHA256(ikm: SecretBytes, info: [UInt8], count: Int) -> SecretBytes {
    hkdfSHA256(ikm: ikm, salt: UnsafeRawBufferPointer(start: nil, count: 0), info: info, count: count)
}

/// HMAC-SHA256 of one byte under `key`.
func hmacSHA256(key: SecretBytes, byte: UInt8) -> SecretBytes {
    SecretBytes(count: HMACSHA256.byteCount) { output in
        var mac = key.withUnsafeBytes { HMACSHA256(key: $0) }
        withUnsafeBytes(of: byte) { mac.update($0) }
        mac.finalize(into: output)
    }
}

extension SecretBytes {
    /// The bytes in `range`, as a new secret.
    func slice(_ range: Range<Int>) -> SecretBytes {
        withUnsafeBytes { source in
            SecretBytes(count: range.count) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[range])) }
        }
    }
}

/// The 32-byte root key of the DH ratchet.
package struct RootKey: Sendable {
    package let key: SecretBytes

    package init(_ key: SecretBytes) {
        self.key = key
    }

    /// One DH ratchet step: HKDF(salt = root key, IKM = DH(ours, theirs), "WhisperRatchet", 64)
    /// → new root key ‖ new chain key (index 0).
    func createChain(theirRatchetKey: ECPublicKey, ourRatchetKey: ECKeyPair) throws(SignalError) -> (RootKey, ChainKey) {
        let shared = try ourRatchetKey.privateKey.agreement(with: theirRatchetKey)
        let derived = key.withUnsafeBytes { salt in
            hkdfSHA256(ikm: shared, salt: salt, info: RatchetConstants.rootInfo, count: 64)
        }
        return (RootKey(derived.slice(0..<32)), ChainKey(key: derived.slice(32..<64), index: 0))
    }
}

/// A symmetric chain key and its index.
package struct ChainKey: Sendable {
    package let key: SecretBytes
    package let index: UInt32

    package init(key: SecretBytes, index: UInt32) {
        self.key = key
        self.index = index
    }

    /// The next chain key: HMAC-SHA256(key, 0x02).
    package var next: ChainKey {
        ChainKey(key: hmacSHA256(key: key, byte: 0x02), index: index &+ 1)
    }

    /// The message-key seed for this index: HMAC-SHA256(key, 0x01).
    package var messageKeySeed: SecretBytes {
        hmacSHA256(key: key, byte: 0x01)
    }

    /// The message keys for this index.
    package var messageKeys: MessageKeys {
        step().keys
    }

    /// This index's message keys and the next chain key in one go.
    package func step() -> (keys: MessageKeys, next: ChainKey) {
        withSeed { MessageKeys(seed: $0, counter: index) }
    }

    /// This index's message-key seed (to store for a skipped message) and the next chain
    /// key in one go.
    package func advance() -> (seed: SecretBytes, next: ChainKey) {
        withSeed { SecretBytes($0) }
    }

    /// Both HMACs of the chain step from one HMAC key schedule: `body` gets the seed
    /// (HMAC 0x01) in a stack buffer that is wiped afterwards, and the result comes back
    /// with the next chain key (HMAC 0x02).
    private func withSeed<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> (Result, ChainKey) {
        key.withUnsafeBytes { key in
            let schedule = HMACSHA256(key: key)
            let nextKey = SecretBytes(count: HMACSHA256.byteCount) { output in
                var mac = schedule
                withUnsafeBytes(of: UInt8(0x02)) { mac.update($0) }
                mac.finalize(into: output)
            }
            let result = withUnsafeTemporaryAllocation(byteCount: HMACSHA256.byteCount, alignment: 16) { seed in
                defer { SecureWipe.wipe(seed) }
                var mac = schedule
                withUnsafeBytes(of: UInt8(0x01)) { mac.update($0) }
                mac.finalize(into: seed)
                return body(UnsafeRawBufferPointer(seed))
            }
            return (result, ChainKey(key: nextKey, index: index &+ 1))
        }
    }
}

/// The keys of one message: AES-256-CBC key, HMAC-SHA256 key, IV — held as the 80 bytes
/// the HKDF produced (one allocation).
package struct MessageKeys: Sendable {
    /// Cipher key 32 ‖ MAC key 32 ‖ IV 16.
    package let material: SecretBytes
    package let counter: UInt32

    /// HKDF(salt: none, IKM: seed, "WhisperMessageKeys", 80) → cipher key 32 ‖ MAC key 32 ‖ IV 16.
    package init(seed: UnsafeRawBufferPointer, counter: UInt32) {
        self.material = SecretBytes(count: 80) { output in
            RatchetConstants.messageKeysInfo.withUnsafeBytes { info in
                HKDFSHA256.derive(
                    extractor: RatchetConstants.messageKeysExtractor, inputKeyMaterial: seed, info: info, into: output)
            }
        }
        self.counter = counter
    }

    /// ``init(seed:counter:)-(UnsafeRawBufferPointer,_)`` from a stored seed.
    package init(seed: SecretBytes, counter: UInt32) {
        self = seed.withUnsafeBytes { MessageKeys(seed: $0, counter: counter) }
    }

    /// Calls `body` with the AES key, the MAC key and the IV (views into the material).
    package func withKeys<Result, Failure: Error>(
        _ body: (_ cipherKey: UnsafeRawBufferPointer, _ macKey: UnsafeRawBufferPointer, _ iv: UnsafeRawBufferPointer)
            throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try material.withUnsafeBytes { raw throws(Failure) in
            try body(
                UnsafeRawBufferPointer(rebasing: raw[0..<32]), UnsafeRawBufferPointer(rebasing: raw[32..<64]),
                UnsafeRawBufferPointer(rebasing: raw[64..<80]))
        }
    }

    /// The HMAC-SHA256 key (a copy, for tests and diagnostics).
    package var macKey: SecretBytes { material.slice(32..<64) }
    /// The AES-256-CBC key (a copy, for tests and diagnostics).
    package var cipherKey: SecretBytes { material.slice(0..<32) }
    /// The CBC IV (a copy, for tests and diagnostics).
    package var iv: SecretBytes { material.slice(64..<80) }
}
