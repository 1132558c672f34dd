import Crypto
import Foundation
import InvisoCrypto
import InvisoTesting
import Testing

// Known-answer values marked "Python" were computed for these tests with CPython's
// arbitrary-precision integers (a*b % p, pow(a, p-2, p), x % L, (a*b+c) % L), from
// random.seed(25519); p = 2^255 − 19, L = 2^252 + 27742317777372353535851937790883648493.

private func field(_ hex: String) -> FieldElement {
    FieldElement(bytes: [UInt8](hex: hex)!)
}

private func randomField(_ generator: inout SeededGenerator) -> FieldElement {
    FieldElement(bytes: generator.bytes(32))
}

private func randomScalar(_ generator: inout SeededGenerator) -> Scalar25519 {
    Scalar25519(reducing: generator.bytes(64))
}

private let pHex = "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"
private let orderHex = "edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010"

@Suite("GF(2^255 − 19)")
struct FieldElementTests {
    @Test("constants: d·121666 = −121665, 2d, √−1² = −1")
    func constants() {
        #expect(FieldElement.edwardsD * FieldElement(121_666) == -FieldElement(121_665))
        #expect(FieldElement.edwardsD2 == FieldElement.edwardsD + FieldElement.edwardsD)
        #expect(FieldElement.sqrtMinusOne.squared() == -FieldElement.one)
        #expect(FieldElement.sqrtMinusOne.isNegative.isTrue == false)
    }

    @Test("Python known answers: products and inverses")
    func knownAnswers() {
        let vectors: [(a: String, b: String, product: String, inverseOfA: String)] = [
            ("6aad39f4c2aaed1a8a27e534ce4aa7426078fe43c27a88b4ada9dd74482b8410",
             "232cae48c88fff9b500f0b4cca8e9f33a72971aa44125c7294d11bb5c82df818",
             "4d9c89b13b70b95cd657e3834059cf68e24ce21919e03c3a40f70b9a3d6bf258",
             "3eb7b9b06dbd9f24df520e8f63ba87954dd94f0fa3a043496e36afc2a4d8b36e"),
            ("52c00060c28921553a62c526134241b82b54e7a6e2d5c69174e5e75e2a082b6e",
             "d99a08e47ccc61a0c7fd186f5fc43b369986715a5578f834b4324705f5921425",
             "a46acac66a508ef2522eec77771fd8fb697d79a9808a3de5d6f112c0a7effd2f",
             "d7e89a389ad79bcce2ee3f2cb85d0b7e9f2c70623f1b3ae4e18603352cea085b"),
            ("0102016c9e45bf9fcd7bc5036e3c2e972bed6264cf29988e59785274c6502d2b",
             "57ac9570ee671978bc641eb94c0e31eb21eb4ef5d7853da56a0ecc50676b1848",
             "8e44c9a0f91ed0c828668a6f8d194b03b139b2ec78d0f05f51a01eb838e03b3c",
             "ba1373dc2e542d9b00a90b09726a4581d0fdc7e4d3a384676e74bc8e68127d51"),
            ("52d68e7732bc13156cefd33dc459bff2be5653a3566c3d4fa23ab942f6766043",
             "78408cf78b253434bee6f24cf56c3e9a471ec54a6fc4e51e90817f9660fc714a",
             "6b69dca15f65419b93a64a700e0df743755f48447cd7d88b690ec1c179b6300f",
             "0acff17d76dddd014c08a7c0a26b51bcb21da07a3b5837a646a31cb206aa8b00"),
        ]
        var ran = 0
        for vector in vectors {
            let a = field(vector.a)
            let b = field(vector.b)
            #expect((a * b).bytes.hex == vector.product)
            #expect((b * a).bytes.hex == vector.product)
            #expect(a.inverted().bytes.hex == vector.inverseOfA)
            ran += 1
        }
        print("Field known answers: \(ran) vectors")
        #expect(ran == 4)
    }

    @Test("x · x⁻¹ = 1 for seeded random x; 0⁻¹ = 0")
    func inverse() {
        var generator = SeededGenerator(seed: 1)
        for _ in 0..<64 {
            let x = randomField(&generator)
            #expect(x * x.inverted() == .one)
        }
        #expect(FieldElement.zero.inverted() == .zero)
        #expect(FieldElement.one.inverted() == .one)
        // −1 is its own inverse; 2⁻¹ = (p + 1)/2.
        #expect((-FieldElement.one).inverted() == -FieldElement.one)
        #expect(FieldElement(2).inverted().bytes.hex
            == "f7ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff3f")
    }

    @Test("seeded random algebraic identities")
    func identities() {
        var generator = SeededGenerator(seed: 2)
        for _ in 0..<200 {
            let a = randomField(&generator)
            let b = randomField(&generator)
            let c = randomField(&generator)
            #expect(a * b == b * a)
            #expect((a + b) * c == a * c + b * c)
            #expect((a * b) * c == a * (b * c))
            #expect((a - b) + b == a)
            #expect(a - a == .zero)
            #expect(-(-a) == a)
            #expect(a + (-a) == .zero)
            #expect(a.squared() == a * a)
            #expect(a.squared(times: 3) == a * a * a * a * a * a * a * a)
            #expect(FieldElement.equal(a, b).isTrue == (a.bytes == b.bytes))
        }
    }

    @Test("largest limbs: 2^255 − 1 and p − 1 behave like 18 and −1")
    func extremeInputs() {
        let allOnes = FieldElement(bytes: [UInt8](repeating: 0xff, count: 32))   // 2^255 − 1 ≡ 18
        #expect(allOnes == FieldElement(18))
        #expect(allOnes.squared() == FieldElement(324))
        #expect(allOnes * allOnes * allOnes == FieldElement(5832))
        let minusOne = field("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
        #expect(minusOne * minusOne == .one)
        #expect(minusOne + .one == .zero)
        #expect(minusOne.bytes.hex == "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")
    }

    @Test("encoding round trips; top bit ignored; non-canonical values reduce and are rejected by canonical decoding")
    func encoding() throws {
        var generator = SeededGenerator(seed: 3)
        for _ in 0..<100 {
            let x = randomField(&generator)
            let bytes = x.bytes
            #expect(bytes[31] & 0x80 == 0)
            #expect(FieldElement(bytes: bytes) == x)
            #expect(FieldElement(bytes: bytes).bytes == bytes)
            #expect(bytes.withUnsafeBytes { FieldElement(canonicalBytes: $0) } == x)
            var high = bytes
            high[31] |= 0x80
            #expect(FieldElement(bytes: high) == x)
        }
        // p ≡ 0, p + 1 ≡ 1, 2^255 − 1 ≡ 18: decoded as residues, re-encoded canonically.
        let nonCanonical: [(String, String)] = [
            (pHex, "0000000000000000000000000000000000000000000000000000000000000000"),
            ("eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
             "0100000000000000000000000000000000000000000000000000000000000000"),
            ("ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
             "1200000000000000000000000000000000000000000000000000000000000000"),
        ]
        for (input, canonical) in nonCanonical {
            let bytes = try #require([UInt8](hex: input))
            #expect(FieldElement(bytes: bytes).bytes.hex == canonical)
            #expect(bytes.withUnsafeBytes { FieldElement(canonicalBytes: $0) } == nil)
        }
        let pMinusOne = try #require([UInt8](hex: "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"))
        #expect(pMinusOne.withUnsafeBytes { FieldElement(canonicalBytes: $0) } != nil)
        #expect([UInt8](repeating: 0, count: 31).withUnsafeBytes { FieldElement(canonicalBytes: $0) } == nil)
    }

    @Test("sign (low bit) of the canonical value")
    func isNegative() {
        #expect(FieldElement.zero.isNegative.isTrue == false)
        #expect(FieldElement.one.isNegative.isTrue)
        #expect((-FieldElement.one).isNegative.isTrue == false)     // p − 1 is even
        // p + 1 as bytes is odd-looking (0xee) but is 1 after reduction.
        #expect(field("eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f").isNegative.isTrue)
        var generator = SeededGenerator(seed: 4)
        for _ in 0..<50 {
            let x = randomField(&generator)
            #expect(x.isNegative.isTrue == (x.bytes[0] & 1 == 1))
            if x != .zero { #expect(x.isNegative.isTrue != (-x).isNegative.isTrue) }
            #expect(x.absolute.isNegative.isTrue == false)
        }
    }

    @Test("square roots of ratios (RFC 9496 SQRT_RATIO_M1)")
    func sqrtRatio() {
        var generator = SeededGenerator(seed: 5)
        var squares = 0
        var nonSquares = 0
        for _ in 0..<100 {
            let u = randomField(&generator)
            let v = randomField(&generator)
            let (wasSquare, root) = FieldElement.sqrtRatio(u, v)
            #expect(root.isNegative.isTrue == false)
            if wasSquare.isTrue {
                squares += 1
                #expect(root.squared() * v == u)
            } else {
                nonSquares += 1
                #expect(root.squared() * v == FieldElement.sqrtMinusOne * u)
            }
            // A square always has its root found.
            let (squareFound, squareRoot) = FieldElement.sqrtRatio(u.squared(), .one)
            #expect(squareFound.isTrue)
            #expect(squareRoot == u.absolute)
        }
        #expect(squares > 20 && nonSquares > 20)
        // 2 is not a square mod p (p ≡ 5 mod 8); u = 0 gives (true, 0); v = 0 gives (false, 0).
        #expect(FieldElement.sqrtRatio(FieldElement(2), .one).wasSquare.isTrue == false)
        #expect(FieldElement.sqrtRatio(.zero, FieldElement(7)).wasSquare.isTrue)
        #expect(FieldElement.sqrtRatio(.zero, FieldElement(7)).root == .zero)
        let byZero = FieldElement.sqrtRatio(FieldElement(4), .zero)
        #expect(byZero.wasSquare.isTrue == false && byZero.root == .zero)
        // pow22523: x^((p−5)/8) · x^((p+3)/8 − (p−5)/8 = 1) … check x^(2^252−3)·x^3 = x^(2^252) by squaring.
        let x = FieldElement(12_345)
        #expect(x.pow22523() * x * x * x == x.squared(times: 252))
    }

    @Test("constant-time select and swap")
    func selection() {
        let a = FieldElement(11)
        let b = FieldElement(22)
        #expect(FieldElement.select(a, b, .false) == a)
        #expect(FieldElement.select(a, b, .true) == b)
        var x = a
        var y = b
        FieldElement.conditionalSwap(&x, &y, .false)
        #expect(x == a && y == b)
        FieldElement.conditionalSwap(&x, &y, .true)
        #expect(x == b && y == a)
        #expect(ConstantTime.Choice.equal(5, 5).isTrue && !ConstantTime.Choice.equal(5, 6).isTrue)
        #expect(ConstantTime.Choice.isZero(0).isTrue && !ConstantTime.Choice.isZero(1 << 63).isTrue)
    }
}

@Suite("Scalars mod L")
struct ScalarTests {
    @Test("Python known answers: 64-byte reduction and multiply-add")
    func knownAnswers() {
        let reductions: [(String, String)] = [
            ("48c56e0c1fe9f4bdc1163d4b27a96135dcca2e6a1ab405cc295e1e9e307c739d83664b2259de939351012a121212c10a4e0a500af417eccb0e89c5cf84761a59",
             "0eb2531df0964824fde6ea55cab9f84470e19569f39423c57aedc4df9bcf3404"),
            ("cdccd4d174e6c726ce04f0e2e16628177937dfa763bc8d0209100df52b40a1bfcea20c6b8300a2fb21cbe78be04693879cbd64027f45101008a382429db76492",
             "a9b5377f23a219f367607b70262a2a5f6942b50d08e63e0ba423c1845b8b6b00"),
            ("a2f96e9e4662f72b163a4b753c8aff69d9f00dd18b03c761dcaf3668aafa7491fdc3b49e90d1facf1bf29e0c02a177db5d9df5b1c0a2dbd0a3775bdf7ac22e5b",
             "056f8065e999ea0c2d2c909199307239d86f086b840a43df7e0c0e292c5e0109"),
            ("ea68136c71a276614cc6869b847adbcfdf3093ccbb7231b11d09fffb8942cd5ae5c11296e10067a45caa82c8e7d7e27a0078fc8ad0f28e49d28283ee779cd951",
             "c20db0198c6f26aeb99b3292c6f14c3ccb16fcd73c174ff55707e0e5f6b84402"),
            (String(repeating: "ff", count: 64), "000f9c44e31106a447938568a71b0ed065bef517d273ecce3d9a307c1b419903"),
        ]
        let multiplyAdds: [(String, String, String, String)] = [
            ("98e85d39fb4f828000d2767981c89ae4ae3d3111eb500376915c51d1c6f7b30b",
             "45f0ad3c0529de9760f4745bb0fadd9c1f38e104ade5ab643c92e70cb0b0620b",
             "d80f36ab0628f5a54c48b9e9454a91adec04952037f7788f90667cee1538170e",
             "10dc0b4a2a88de04eb8294cea62eced3bf13d51fdd8ac34dd7462cf77e68f10d"),
            ("c042e868d6febdf8f0ddef045f988e4b556a84859801ff0fce8d842db0897f04",
             "41042e15cd0182eabff5a5fab406ff898d1eeef23128b4a697785077c619fc04",
             "226c3e9b8dd9585257c295b5a899c33d432f023996c690d448455715756b9b00",
             "5ba30a5e3d7772d9dd7a1ec3a724fb989bdf0d2e9dac7cf607caec0b06158c07"),
            ("ca2372b25b25ce57a403d8b92517b25b0a358e3b8ecb32c1cc43dabefd6b4805",
             "f4cab8635bff219399ae9fd33f26b3fa89c0e4253a9ddf49dc55d91cc5b6ea04",
             "f68ec73f9e62fd50e098f040fe66e7aca8598d3c5f74acd66da682a45e32c106",
             "cadee96b18879dbbf4c326c79fe9d244bd70199ea1ed496b8e88919f95a47404"),
        ]
        var ran = 0
        for (input, expected) in reductions {
            #expect(Scalar25519(reducing: [UInt8](hex: input)!).bytes.hex == expected)
            ran += 1
        }
        for (a, b, c, expected) in multiplyAdds {
            let result = Scalar25519.multiplyAdd(
                Scalar25519(canonicalBytes: [UInt8](hex: a)!)!, Scalar25519(canonicalBytes: [UInt8](hex: b)!)!,
                Scalar25519(canonicalBytes: [UInt8](hex: c)!)!)
            #expect(result.bytes.hex == expected)
            ran += 1
        }
        print("Scalar known answers: \(ran) vectors")
        #expect(ran == 8)
    }

    @Test("canonical check: s < L accepted, L and above rejected")
    func canonical() throws {
        var order = try #require([UInt8](hex: orderHex))
        #expect(!Scalar25519.isCanonical(order))
        #expect(Scalar25519(reducing: order) == .zero)
        order[0] -= 1                                            // L − 1
        #expect(Scalar25519.isCanonical(order))
        #expect(Scalar25519(canonicalBytes: order)! + .one == .zero)
        #expect(-Scalar25519.one == Scalar25519(canonicalBytes: order)!)
        #expect(!Scalar25519.isCanonical([UInt8](repeating: 0xff, count: 32)))
        #expect(!Scalar25519.isCanonical([UInt8](repeating: 0, count: 31)))
        #expect(Scalar25519.isCanonical([UInt8](repeating: 0, count: 32)))
        var generator = SeededGenerator(seed: 6)
        for _ in 0..<50 {
            let s = randomScalar(&generator)
            #expect(Scalar25519.isCanonical(s.bytes))
            #expect(Scalar25519(reducing: s.bytes) == s)
        }
    }

    @Test("seeded random ring identities")
    func identities() {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<100 {
            let a = randomScalar(&generator)
            let b = randomScalar(&generator)
            let c = randomScalar(&generator)
            #expect(a * b == b * a)
            #expect((a + b) * c == a * c + b * c)
            #expect(Scalar25519.multiplyAdd(a, b, c) == a * b + c)
            #expect(a + (-a) == .zero)
            #expect(a - b + b == a)
            #expect(a * .one == a)
            #expect(Scalar25519.select(a, b, .true) == b && Scalar25519.select(a, b, .false) == a)
        }
        #expect(-Scalar25519.zero == .zero)
    }
}

@Suite("edwards25519")
struct EdwardsPointTests {
    @Test("base point: RFC 8032 encoding, decodes to itself, identity laws")
    func basePoint() throws {
        let b = EdwardsPoint.basePoint
        #expect(b.compressed.hex == "5866666666666666666666666666666666666666666666666666666666666666")
        let decoded = try #require(EdwardsPoint(compressed: [UInt8](hex: "5866666666666666666666666666666666666666666666666666666666666666")!))
        #expect(decoded == b)
        #expect((EdwardsPoint.basePoint + .identity) == b)
        #expect((b - b) == .identity)
        #expect((b - b).isIdentity.isTrue && !b.isIdentity.isTrue)
        #expect(EdwardsPoint.identity.compressed.hex == "0100000000000000000000000000000000000000000000000000000000000000")
    }

    @Test("[L]B = identity with the base table and with the window method; [L − 1]B = −B")
    func order() throws {
        let order = try #require([UInt8](hex: orderHex))
        #expect(order.withUnsafeBytes { EdwardsPoint.multiplyBase(integer: $0) } == .identity)
        #expect(order.withUnsafeBytes { EdwardsPoint.basePoint.multiplied(byInteger: $0) } == .identity)
        var orderMinusOne = order
        orderMinusOne[0] -= 1
        #expect(orderMinusOne.withUnsafeBytes { EdwardsPoint.multiplyBase(integer: $0) } == -EdwardsPoint.basePoint)
        // A top-bit-clear 255-bit integer: [2^255 − 1]B = [(2^255 − 1) mod L]B.
        var big = [UInt8](repeating: 0xff, count: 32)
        big[31] = 0x7f
        let reduced = Scalar25519(reducing: big)
        #expect(big.withUnsafeBytes { EdwardsPoint.multiplyBase(integer: $0) } == EdwardsPoint.multiplyBase(reduced))
        #expect(big.withUnsafeBytes { EdwardsPoint.basePoint.multiplied(byInteger: $0) } == EdwardsPoint.multiplyBase(reduced))
    }

    @Test("small multiples: [0]B, [1]B, [2]B, [3]B agree across methods")
    func smallMultiples() {
        let b = EdwardsPoint.basePoint
        #expect(EdwardsPoint.multiplyBase(.zero) == .identity)
        #expect(EdwardsPoint.multiplyBase(.one) == b)
        #expect(EdwardsPoint.multiplyBase(.one + .one) == b.doubled())
        #expect(EdwardsPoint.multiplyBase(.one + .one + .one) == b + b + b)
        #expect(b.multiplied(by: .one + .one + .one) == b.doubled() + b)
        #expect(b.multipliedByCofactor() == b.doubled().doubled().doubled())
    }

    @Test("seeded random group laws: [a]B + [b]B = [a+b]B, [a]([b]B) = [ab]B, doubling, compression round trip")
    func groupLaws() throws {
        var generator = SeededGenerator(seed: 8)
        for _ in 0..<16 {
            let a = randomScalar(&generator)
            let b = randomScalar(&generator)
            let aB = EdwardsPoint.multiplyBase(a)
            let bB = EdwardsPoint.multiplyBase(b)
            #expect(aB + bB == EdwardsPoint.multiplyBase(a + b))
            #expect(aB - bB == EdwardsPoint.multiplyBase(a - b))
            #expect(EdwardsPoint.basePoint.multiplied(by: a) == aB)
            #expect(bB.multiplied(by: a) == EdwardsPoint.multiplyBase(a * b))
            #expect(EdwardsPoint.vartimeDoubleScalarMultiplyBase(a, bB, b) == EdwardsPoint.multiplyBase(a * b + b))
            #expect(aB.doubled() == aB + aB)
            #expect(aB + (-aB) == .identity)
            #expect((aB + bB) + aB == aB + (bB + aB))
            let encoded = aB.compressed
            let decoded = try #require(EdwardsPoint(compressed: encoded))
            #expect(decoded == aB)
            #expect(decoded.compressed == encoded)
            // Flipping the sign bit gives −P.
            var flipped = encoded
            flipped[31] ^= 0x80
            #expect(EdwardsPoint(compressed: flipped) == -aB)
        }
    }

    @Test("decoding rejects non-canonical y, x = 0 with sign 1, non-points and wrong lengths")
    func decodingRejects() throws {
        let rejected = [
            pHex,                                                                       // y = p (≡ 0, non-canonical)
            "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",         // y = p + 1
            "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",         // y = 2^255 − 1, sign 1
            "0100000000000000000000000000000000000000000000000000000000000080",         // y = 1, x = 0, sign 1
            "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",         // y = −1, x = 0, sign 1
            "0200000000000000000000000000000000000000000000000000000000000000",         // y = 2: x² not a square (Python)
        ]
        for hex in rejected {
            #expect(EdwardsPoint(compressed: [UInt8](hex: hex)!) == nil, "\(hex)")
        }
        // The canonical y = 0 is a point (x = ±√−1), and y = −1 with sign 0 is the point of order 2.
        #expect(EdwardsPoint(compressed: [UInt8](repeating: 0, count: 32)) != nil)
        let orderTwo = try #require(EdwardsPoint(compressed: [UInt8](hex: "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")!))
        #expect(orderTwo.doubled() == .identity && orderTwo != .identity)
        #expect(EdwardsPoint(compressed: [UInt8](repeating: 0, count: 31)) == nil)
        #expect(EdwardsPoint(compressed: [UInt8](repeating: 0, count: 33)) == nil)
    }

    @Test("RFC 8032 §7.1 Ed25519 tests 1–3 reproduce exactly with a test-only signer built on these primitives")
    func rfc8032() {
        // RFC 8032 §7.1, TEST 1, TEST 2, TEST 3: SECRET KEY, PUBLIC KEY, MESSAGE, SIGNATURE.
        let vectors: [(secret: String, publicKey: String, message: String, signature: String)] = [
            ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
             "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
             "",
             "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
            ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
             "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
             "72",
             "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
            ("c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
             "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
             "af82",
             "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"),
        ]
        var ran = 0
        for vector in vectors {
            let seed = [UInt8](hex: vector.secret)!
            let message = [UInt8](hex: vector.message)!
            let signature = [UInt8](hex: vector.signature)!
            let publicKey = [UInt8](hex: vector.publicKey)!
            #expect(TestEd25519.publicKey(seed: seed).hex == vector.publicKey)
            #expect(TestEd25519.sign(seed: seed, message: message).hex == vector.signature)
            #expect(TestEd25519.verify(publicKey: publicKey, message: message, signature: signature))
            var tampered = signature
            tampered[0] ^= 1
            #expect(!TestEd25519.verify(publicKey: publicKey, message: message, signature: tampered))
            ran += 1
        }
        print("RFC 8032 Ed25519 vectors: \(ran) ran")
        #expect(ran == 3)
    }

    @Test("swift-crypto cross-check: Ed25519 public keys and signatures for seeded random seeds")
    func swiftCryptoEd25519() throws {
        var generator = SeededGenerator(seed: 9)
        var identical = 0
        let count = 24
        for index in 0..<count {
            let seed = generator.bytes(32)
            let message = generator.bytes(index * 7)
            let key = try Curve25519.Signing.PrivateKey(rawRepresentation: seed)
            let publicKey = Array(key.publicKey.rawRepresentation)
            #expect(TestEd25519.publicKey(seed: seed) == publicKey)
            let theirs = Array(try key.signature(for: message))
            #expect(TestEd25519.verify(publicKey: publicKey, message: message, signature: theirs))
            let ours = TestEd25519.sign(seed: seed, message: message)
            #expect(key.publicKey.isValidSignature(ours, for: message))
            if ours == theirs { identical += 1 }
        }
        // swift-crypto's BoringSSL backend (Linux) signs deterministically as RFC 8032 says;
        // CryptoKit on Apple platforms randomizes. Either way both verifications above hold.
        print("swift-crypto Ed25519 cross-check: \(count) keys; \(identical) signatures byte-identical to ours")
    }

    @Test("Montgomery/Edwards: swift-crypto's X25519 public u = u of [clamp(k)]B, and back")
    func montgomery() throws {
        var generator = SeededGenerator(seed: 10)
        var signs = [0, 0]
        for _ in 0..<32 {
            let k = generator.bytes(32)
            let key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: k)
            let expected = Array(key.publicKey.rawRepresentation)
            let point = TestEd25519.clamp(k).withUnsafeBytes { EdwardsPoint.multiplyBase(integer: $0) }
            #expect(point.montgomeryU.bytes == expected)
            let sign = point.compressed[31] >> 7
            signs[Int(sign)] += 1
            let u = FieldElement(bytes: expected)
            let back = try #require(EdwardsPoint(montgomeryU: u, sign: ConstantTime.Choice(bit: UInt64(sign))))
            #expect(back == point)
            #expect(u.edwardsY().y.bytes == Array(point.compressed[0..<31]) + [point.compressed[31] & 0x7f])
        }
        #expect(signs[0] > 0 && signs[1] > 0)
        // RFC 7748 §4.1: the base point u = 9 corresponds to B.
        #expect(EdwardsPoint.basePoint.montgomeryU == FieldElement(9))
        // u = −1 has no Edwards image; u = 2 lies on the twist (Python: u³ + 486662u² + u is not a square).
        #expect((-FieldElement.one).edwardsY().isValid.isTrue == false)
        #expect(EdwardsPoint(montgomeryU: -FieldElement.one, sign: .false) == nil)
        #expect(EdwardsPoint(montgomeryU: FieldElement(2), sign: .false) == nil)
        // u = 0 ↔ (0, −1): sign 0 only.
        #expect(EdwardsPoint(montgomeryU: .zero, sign: .false) != nil)
        #expect(EdwardsPoint(montgomeryU: .zero, sign: .true) == nil)
        #expect(EdwardsPoint.identity.montgomeryU == .zero)
    }
}
