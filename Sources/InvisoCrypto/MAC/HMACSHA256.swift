import Crypto

/// HMAC-SHA256 (RFC 2104) computed directly on swift-crypto's `SHA256`.
///
/// swift-crypto's `HMAC<SHA256>` and `HKDF<SHA256>` are generic and, called from another
/// module, spend most of their time in the Swift runtime looking up generic metadata
/// (docs/signal.md, "Performance"). Protocols that derive keys for every message (the Double
/// Ratchet) use this concrete version; results are identical (tests compare both).
package struct HMACSHA256: Sendable {
    /// The output length in bytes.
    package static let byteCount = 32
    private static let blockSize = 64

    private var inner: SHA256
    private var outer: SHA256

    /// Starts a MAC under `key` (any length; keys over 64 bytes are hashed first).
    package init(key: UnsafeRawBufferPointer) {
        var inner = SHA256()
        var outer = SHA256()
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.blockSize) { block in
            block.initialize(repeating: 0)
            if key.count > Self.blockSize {
                let digest = SHA256.hash(data: key)
                digest.withUnsafeBytes { UnsafeMutableRawBufferPointer(block).copyMemory(from: $0) }
            } else if key.count > 0 {
                UnsafeMutableRawBufferPointer(block).copyMemory(from: key)
            }
            for index in 0..<Self.blockSize { block[index] ^= 0x36 }
            inner.update(bufferPointer: UnsafeRawBufferPointer(block))
            for index in 0..<Self.blockSize { block[index] ^= 0x36 ^ 0x5c }
            outer.update(bufferPointer: UnsafeRawBufferPointer(block))
            SecureWipe.wipe(UnsafeMutableRawBufferPointer(block))
        }
        self.inner = inner
        self.outer = outer
    }

    /// Adds message bytes.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        inner.update(bufferPointer: bytes)
    }

    /// Adds message bytes.
    package mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { inner.update(bufferPointer: $0) }
    }

    /// Writes the 32-byte tag to the start of `output`.
    package func finalize(into output: UnsafeMutableRawBufferPointer) {
        precondition(output.count >= Self.byteCount)
        var outer = self.outer
        let innerDigest = inner.finalize()
        innerDigest.withUnsafeBytes { outer.update(bufferPointer: $0) }
        outer.finalize().withUnsafeBytes { output.copyMemory(from: $0) }
    }

    /// The 32-byte tag.
    package func finalize() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Self.byteCount) { buffer, count in
            finalize(into: UnsafeMutableRawBufferPointer(buffer))
            count = Self.byteCount
        }
    }

    /// One-shot MAC of `message` under `key`.
    package static func authenticationCode(key: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer) -> [UInt8] {
        var mac = HMACSHA256(key: key)
        mac.update(message)
        return mac.finalize()
    }
}

/// HKDF-SHA256 (RFC 5869) on ``HMACSHA256``.
package enum HKDFSHA256 {
    /// Extract-then-expand into `output` (at most 255 × 32 bytes). An empty salt means
    /// 32 zero bytes, as the RFC specifies.
    package static func derive(
        inputKeyMaterial: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, info: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) {
        derive(extractor: HMACSHA256(key: salt), inputKeyMaterial: inputKeyMaterial, info: info, into: output)
    }

    /// Extract-then-expand with the extract step's key schedule (`HMACSHA256(key: salt)`)
    /// supplied: callers that always use the same salt compute it once.
    package static func derive(
        extractor: HMACSHA256, inputKeyMaterial: UnsafeRawBufferPointer, info: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) {
        precondition(output.count <= 255 * HMACSHA256.byteCount)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 * HMACSHA256.byteCount) { scratch in
            let scratch = UnsafeMutableRawBufferPointer(scratch)
            let prk = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<32])
            let block = UnsafeMutableRawBufferPointer(rebasing: scratch[32..<64])
            defer { SecureWipe.wipe(scratch) }
            var extract = extractor
            extract.update(inputKeyMaterial)
            extract.finalize(into: prk)
            let expandKey = HMACSHA256(key: UnsafeRawBufferPointer(prk))
            var offset = 0
            var counter: UInt8 = 1
            while offset < output.count {
                var mac = expandKey
                if counter > 1 { mac.update(UnsafeRawBufferPointer(block)) }
                mac.update(info)
                withUnsafeBytes(of: counter) { mac.update($0) }
                mac.finalize(into: block)
                let take = min(HMACSHA256.byteCount, output.count - offset)
                UnsafeMutableRawBufferPointer(rebasing: output[offset..<offset + take])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: block[0..<take]))
                offset += take
                counter &+= 1
            }
        }
    }
}
