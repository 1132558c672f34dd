import Crypto
import Foundation
import InvisoCrypto
import InvisoTesting
import Testing

@Suite("HMAC-SHA256 / HKDF-SHA256 on SHA256")
struct HMACSHA256Tests {
    /// RFC 4231 test case 2 and RFC 5869 test case 1 (data copied from the RFCs).
    @Test("RFC 4231 §4.3 and RFC 5869 A.1")
    func rfcVectors() {
        let key = Array("Jefe".utf8)
        let message = Array("what do ya want for nothing?".utf8)
        let tag = key.withUnsafeBytes { k in message.withUnsafeBytes { HMACSHA256.authenticationCode(key: k, message: $0) } }
        #expect(tag.hex == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")

        let ikm = [UInt8](repeating: 0x0b, count: 22)
        let salt = [UInt8](hex: "000102030405060708090a0b0c")!
        let info = [UInt8](hex: "f0f1f2f3f4f5f6f7f8f9")!
        var okm = [UInt8](repeating: 0, count: 42)
        ikm.withUnsafeBytes { ikm in
            salt.withUnsafeBytes { salt in
                info.withUnsafeBytes { info in
                    okm.withUnsafeMutableBytes { HKDFSHA256.derive(inputKeyMaterial: ikm, salt: salt, info: info, into: $0) }
                }
            }
        }
        #expect(okm.hex == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    }

    /// Seeded comparison with swift-crypto's generic HMAC and HKDF: key lengths around the
    /// 64-byte block, empty salts, every output length up to 200 bytes.
    @Test("Agrees with swift-crypto's HMAC<SHA256> and HKDF<SHA256>")
    func matchesSwiftCrypto() {
        var random = SeededGenerator(seed: 4231)
        for round in 0..<300 {
            let keyLength = [0, 1, 31, 32, 63, 64, 65, 100, 200][round % 9]
            let key = random.bytes(keyLength)
            let message = random.bytes(Int(random.next() % 300))
            let ours = key.withUnsafeBytes { k in message.withUnsafeBytes { HMACSHA256.authenticationCode(key: k, message: $0) } }
            let theirs = Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
            #expect(ours == theirs, "HMAC key \(keyLength) message \(message.count)")

            let salt = round % 3 == 0 ? [] : random.bytes(Int(random.next() % 80))
            let info = random.bytes(Int(random.next() % 40))
            let length = 1 + round % 200
            var okm = [UInt8](repeating: 0, count: length)
            message.withUnsafeBytes { ikm in
                salt.withUnsafeBytes { salt in
                    info.withUnsafeBytes { info in
                        okm.withUnsafeMutableBytes { HKDFSHA256.derive(inputKeyMaterial: ikm, salt: salt, info: info, into: $0) }
                    }
                }
            }
            let expected = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: message), salt: salt, info: info, outputByteCount: length)
            #expect(okm == expected.withUnsafeBytes { Array($0) }, "HKDF length \(length)")
        }
    }

    /// One precomputed extract key schedule reused for many derivations (as the ratchet
    /// does for its empty salt) gives the same bytes as a fresh one each time.
    @Test("A reused extract key schedule derives what a fresh one does")
    func reusedExtractor() {
        var random = SeededGenerator(seed: 5869)
        for salt in [[], random.bytes(32), random.bytes(90)] {
            let extractor = salt.withUnsafeBytes { HMACSHA256(key: $0) }
            for round in 0..<50 {
                let ikm = random.bytes(Int(random.next() % 64))
                let info = random.bytes(round % 20)
                var fresh = [UInt8](repeating: 0, count: 80)
                var reused = [UInt8](repeating: 0, count: 80)
                ikm.withUnsafeBytes { ikm in
                    info.withUnsafeBytes { info in
                        salt.withUnsafeBytes { salt in
                            fresh.withUnsafeMutableBytes {
                                HKDFSHA256.derive(inputKeyMaterial: ikm, salt: salt, info: info, into: $0)
                            }
                        }
                        reused.withUnsafeMutableBytes {
                            HKDFSHA256.derive(extractor: extractor, inputKeyMaterial: ikm, info: info, into: $0)
                        }
                    }
                }
                #expect(fresh == reused, "salt \(salt.count) round \(round)")
            }
        }
    }
}
