import Crypto
import Foundation
import InvisoCrypto
import InvisoTesting

/// The parts of RFC 9380's curve25519 suites that are not the map itself, written from the
/// RFC for the tests only: expand_message_xmd with SHA-512 (§5.3.1), hash_to_field with
/// L = 48 (§5.2), and the Montgomery group law for the cofactor clearing P = 8·(Q0 + Q1).
/// Variable time and unoptimised; never for secrets.
enum HashToCurve25519 {
    /// expand_message_xmd(msg, DST, len_in_bytes) with H = SHA-512 (b = 64, s = 128 bytes).
    static func expandMessageXMD(_ message: [UInt8], dst: [UInt8], byteCount: Int) -> [UInt8] {
        let blockCount = (byteCount + 63) / 64
        precondition(blockCount <= 255 && byteCount <= 65535 && dst.count <= 255, "expand_message_xmd limits")
        let dstPrime = dst + [UInt8(dst.count)]
        let zPad = [UInt8](repeating: 0, count: 128)
        let lengthBytes = [UInt8(byteCount >> 8), UInt8(byteCount & 0xff)]
        let b0 = Array(SHA512.hash(data: zPad + message + lengthBytes + [0] + dstPrime))
        var previous = Array(SHA512.hash(data: b0 + [1] + dstPrime))
        var output = previous
        for index in stride(from: 2, through: blockCount, by: 1) {
            let mixed = zip(b0, previous).map { $0 ^ $1 }
            previous = Array(SHA512.hash(data: mixed + [UInt8(index)] + dstPrime))
            output += previous
        }
        return Array(output.prefix(byteCount))
    }

    /// hash_to_field(msg, count) for GF(2^255 − 19) with L = 48: each element is a 48-byte
    /// big-endian integer reduced mod p.
    static func hashToField(_ message: [UInt8], dst: [UInt8], count: Int) -> [FieldElement] {
        let uniform = expandMessageXMD(message, dst: dst, byteCount: count * 48)
        return (0..<count).map { index in reduce48(Array(uniform[(index * 48)..<(index * 48 + 48)])) }
    }

    /// A 48-byte big-endian integer mod p: with the little-endian halves lo (256 bits) and
    /// hi (128 bits), value = lo₂₅₅ + bit255·2^255 + hi·2^256 ≡ lo₂₅₅ + 19·bit255 + 38·hi.
    static func reduce48(_ bigEndian: [UInt8]) -> FieldElement {
        let littleEndian = Array(bigEndian.reversed())
        let low = Array(littleEndian[0..<32])
        let high = Array(littleEndian[32..<48]) + [UInt8](repeating: 0, count: 16)
        let bit255 = FieldElement(UInt64(low[31] >> 7))
        return FieldElement(bytes: low) + FieldElement(19) * bit255 + FieldElement(38) * FieldElement(bytes: high)
    }

    /// An affine point of v² = u³ + A·u² + u (never the point at infinity here).
    struct Point: Equatable {
        var u: FieldElement
        var v: FieldElement

        /// The chord-and-tangent sum; the vectors never meet P = −Q.
        static func + (p: Point, q: Point) -> Point {
            let slope: FieldElement
            if p == q {
                let numerator =
                    FieldElement(3) * p.u.squared() + FieldElement(2) * FieldElement.montgomeryA * p.u + .one
                slope = numerator * (p.v + p.v).inverted()
            } else {
                slope = (q.v - p.v) * (q.u - p.u).inverted()
            }
            let u = slope.squared() - FieldElement.montgomeryA - p.u - q.u
            return Point(u: u, v: slope * (p.u - u) - p.v)
        }

        /// 8·P, the curve25519 suites' cofactor clearing (h_eff = 8).
        var clearedCofactor: Point {
            let twice = self + self
            let four = twice + twice
            return four + four
        }
    }

    /// A field element from a vector's big-endian hex.
    static func field(bigEndianHex hex: String) -> FieldElement? {
        guard let bytes = [UInt8](hex: hex), bytes.count == 32 else { return nil }
        return FieldElement(bytes: Array(bytes.reversed()))
    }
}
