import Foundation
import InvisoCrypto
import InvisoTesting
import Testing

@Suite("Elligator 2 on Curve25519 (RFC 9380)")
struct Elligator2Tests {
    /// `shared/vectors/cpace/rfc9380-curve25519-ell2.json`: RFC 9380 Appendix J.4
    /// (curve25519_XMD:SHA-512_ELL2_RO_ and _NU_), taken from
    /// cfrg/draft-irtf-cfrg-hash-to-curve@664b13592116cecc9e52fb192dcde0ade36f904e,
    /// poc/vectors/curve25519_XMD:SHA-512_ELL2_{RO,NU}_.json (see the file's README).
    struct VectorFile: Decodable {
        struct Coordinates: Decodable {
            let x: String
            let y: String
        }
        struct Vector: Decodable {
            let msg: String
            let u: [String]
            let Q0: Coordinates?
            let Q1: Coordinates?
            let Q: Coordinates?
            let P: Coordinates
            let P_x_le32: String
        }
        struct HashToField: Decodable {
            let L: Int
            let count: Int
        }
        struct Suite: Decodable {
            let dst: String
            let hash_to_field: HashToField
            let random_oracle: Bool
            let vectors: [Vector]
        }
        let suites: [String: Suite]
    }

    @Test("every RFC 9380 curve25519 vector: msg → u → Q (the map) → P", .enabled(if: SharedVectors.present("cpace/rfc9380-curve25519-ell2.json"), SharedVectors.skipComment))
    func rfc9380Vectors() throws {
        guard
            let url = sharedVectorFile("cpace/rfc9380-curve25519-ell2.json", describing: "RFC 9380 curve25519 vectors")
        else { return }
        let file = try JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: url))
        var ran = 0
        var mapsChecked = 0
        for (name, suite) in file.suites.sorted(by: { $0.key < $1.key }) {
            #expect(suite.hash_to_field.L == 48, "\(name)")
            for vector in suite.vectors {
                let label = "\(name) msg=\(vector.msg.prefix(16))"
                // hash_to_field
                let fields = HashToCurve25519.hashToField(
                    Array(vector.msg.utf8), dst: Array(suite.dst.utf8), count: suite.hash_to_field.count)
                let expectedFields = try vector.u.map {
                    try #require(HashToCurve25519.field(bigEndianHex: $0), "\(label)")
                }
                #expect(fields == expectedFields, "\(label): u")
                // map_to_curve, through the public byte API
                let expectedQs = suite.random_oracle ? [vector.Q0, vector.Q1] : [vector.Q]
                #expect(expectedQs.count == fields.count, "\(label)")
                var points: [HashToCurve25519.Point] = []
                for (field, expected) in zip(expectedFields, expectedQs) {
                    let expected = try #require(expected, "\(label): Q")
                    let mapped = try #require(Elligator2.mapToCurve25519(field.bytes))
                    #expect(mapped.u == HashToCurve25519.field(bigEndianHex: expected.x)?.bytes, "\(label): Q.x")
                    #expect(mapped.v == HashToCurve25519.field(bigEndianHex: expected.y)?.bytes, "\(label): Q.y")
                    points.append(
                        HashToCurve25519.Point(u: FieldElement(bytes: mapped.u), v: FieldElement(bytes: mapped.v)))
                    mapsChecked += 1
                }
                // clear_cofactor(Q0 + Q1) or clear_cofactor(Q)
                var sum = try #require(points.first, "\(label)")
                for point in points.dropFirst() { sum = sum + point }
                let p = sum.clearedCofactor
                #expect(p.u.bytes == HashToCurve25519.field(bigEndianHex: vector.P.x)?.bytes, "\(label): P.x")
                #expect(p.v.bytes == HashToCurve25519.field(bigEndianHex: vector.P.y)?.bytes, "\(label): P.y")
                #expect(p.u.bytes.hex == vector.P_x_le32, "\(label): P_x_le32")
                ran += 1
            }
        }
        print("RFC 9380 curve25519 vectors: \(ran) ran, \(mapsChecked) map_to_curve checks")
        #expect(ran == 10, "expected 10 RFC 9380 curve25519 vectors, ran \(ran)")
        #expect(mapsChecked == 15)
    }

    @Test("the image is on the curve, depends on r² only, and reduces its input", arguments: [1, 2, 3, 4])
    func properties(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        for _ in 0..<16 {
            let r = FieldElement(bytes: random.bytes(32))
            let (u, v) = Elligator2.map(r)
            #expect(v.squared() == ((u + .montgomeryA) * u + .one) * u)
            let (negatedU, negatedV) = Elligator2.map(-r)
            #expect(negatedU == u && negatedV == v)
            // The byte API reads the low 255 bits mod p: r + p (when it fits) and bit 255 do
            // not change the image.
            var withTopBit = r.bytes
            withTopBit[31] |= 0x80
            #expect(Elligator2.mapToCurve25519(withTopBit) == Elligator2.mapToCurve25519(r.bytes))
        }
        // p + 1 encodes 1 non-canonically.
        let pPlusOne = [UInt8](hex: "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")!
        #expect(Elligator2.mapToCurve25519(pPlusOne) == Elligator2.mapToCurve25519(FieldElement.one.bytes))
    }

    @Test("r = 0 maps to a curve point; wrong lengths are refused")
    func edgeCases() {
        let (u, v) = Elligator2.map(.zero)
        #expect(v.squared() == ((u + .montgomeryA) * u + .one) * u)
        #expect(Elligator2.mapToCurve25519([UInt8](repeating: 0, count: 31)) == nil)
        #expect(Elligator2.mapToCurve25519([UInt8](repeating: 0, count: 33)) == nil)
    }
}
