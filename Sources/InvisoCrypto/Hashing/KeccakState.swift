/// The 1600-bit Keccak state and the Keccak-f[1600] permutation (FIPS 202, sections 3.1–3.4).
///
/// The state is 25 lanes of 64 bits, stored inline. Lane `(x, y)` is element `x + 5y`,
/// and bit `z` of a lane is bit `z` of the `UInt64` (FIPS 202 section 3.1.2). Bytes map to
/// lanes little-endian (FIPS 202 Appendix B.1), whatever the byte order of the machine:
/// byte `i` of the state is bits `8(i mod 8)...8(i mod 8)+7` of lane `i / 8`.
///
/// Nothing here allocates; the permutation works on 25 local variables.
package struct KeccakState: Sendable {
    /// The 25 lanes, lane `(x, y)` at index `x + 5y`.
    package typealias Lanes = (
        UInt64, UInt64, UInt64, UInt64, UInt64,
        UInt64, UInt64, UInt64, UInt64, UInt64,
        UInt64, UInt64, UInt64, UInt64, UInt64,
        UInt64, UInt64, UInt64, UInt64, UInt64,
        UInt64, UInt64, UInt64, UInt64, UInt64
    )

    /// The number of bytes in the state (b = 1600 bits).
    package static let byteCount = 200

    /// The lanes of the state.
    package var lanes: Lanes

    /// The all-zero state, where every sponge starts.
    package init() {
        lanes = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    }

    /// Reads lane `index` (`x + 5y`, 0...24).
    package subscript(lane index: Int) -> UInt64 {
        get {
            precondition((0..<25).contains(index), "lane index out of range")
            return withUnsafeLanes { $0[index] }
        }
        set {
            precondition((0..<25).contains(index), "lane index out of range")
            withUnsafeMutableLanes { $0[index] = newValue }
        }
    }

    // MARK: - Byte access

    /// XORs `count` bytes from `source` into the state, starting at state byte `offset`.
    /// `offset + count` must not exceed 200.
    @inline(__always)
    package mutating func xor(_ source: UnsafeRawPointer, count: Int, at offset: Int) {
        assert(offset >= 0 && count >= 0 && offset + count <= Self.byteCount)
        withUnsafeMutableLanes { lanes in
            var position = offset
            var read = 0
            // Bytes up to the next lane boundary, one at a time.
            while read < count && position & 7 != 0 {
                lanes[position &>> 3] ^=
                    UInt64(source.load(fromByteOffset: read, as: UInt8.self))
                    &<< UInt64((position & 7) &<< 3)
                position &+= 1
                read &+= 1
            }
            // Whole lanes.
            while count &- read >= 8 {
                lanes[position &>> 3] ^= UInt64(
                    littleEndian: source.loadUnaligned(fromByteOffset: read, as: UInt64.self)
                )
                position &+= 8
                read &+= 8
            }
            // The tail of a partial lane.
            while read < count {
                lanes[position &>> 3] ^=
                    UInt64(source.load(fromByteOffset: read, as: UInt8.self))
                    &<< UInt64((position & 7) &<< 3)
                position &+= 1
                read &+= 1
            }
        }
    }

    /// XORs `byte` into state byte `offset` (0..<200).
    @inline(__always)
    package mutating func xor(byte: UInt8, at offset: Int) {
        assert(offset >= 0 && offset < Self.byteCount)
        withUnsafeMutableLanes { lanes in
            lanes[offset &>> 3] ^= UInt64(byte) &<< UInt64((offset & 7) &<< 3)
        }
    }

    /// Copies `count` state bytes, starting at state byte `offset`, to `destination`.
    /// `offset + count` must not exceed 200.
    @inline(__always)
    package func copyBytes(to destination: UnsafeMutableRawPointer, count: Int, from offset: Int) {
        assert(offset >= 0 && count >= 0 && offset + count <= Self.byteCount)
        withUnsafeLanes { lanes in
            var position = offset
            var written = 0
            while written < count && position & 7 != 0 {
                let byte = UInt8(truncatingIfNeeded: lanes[position &>> 3] &>> UInt64((position & 7) &<< 3))
                destination.storeBytes(of: byte, toByteOffset: written, as: UInt8.self)
                position &+= 1
                written &+= 1
            }
            while count &- written >= 8 {
                destination.storeBytes(of: lanes[position &>> 3].littleEndian, toByteOffset: written, as: UInt64.self)
                position &+= 8
                written &+= 8
            }
            while written < count {
                let byte = UInt8(truncatingIfNeeded: lanes[position &>> 3] &>> UInt64((position & 7) &<< 3))
                destination.storeBytes(of: byte, toByteOffset: written, as: UInt8.self)
                position &+= 1
                written &+= 1
            }
        }
    }

    @inline(__always)
    private func withUnsafeLanes<R>(_ body: (UnsafeBufferPointer<UInt64>) -> R) -> R {
        withUnsafePointer(to: lanes) { tuple in
            tuple.withMemoryRebound(to: UInt64.self, capacity: 25) {
                body(UnsafeBufferPointer(start: $0, count: 25))
            }
        }
    }

    @inline(__always)
    private mutating func withUnsafeMutableLanes<R>(_ body: (UnsafeMutableBufferPointer<UInt64>) -> R) -> R {
        withUnsafeMutablePointer(to: &lanes) { tuple in
            tuple.withMemoryRebound(to: UInt64.self, capacity: 25) {
                body(UnsafeMutableBufferPointer(start: $0, count: 25))
            }
        }
    }

    // MARK: - Keccak-f[1600]

    /// The round constants RC[i_r] for i_r = 0...23 (FIPS 202 section 3.2.5, Algorithms 5
    /// and 6, with l = 6). The tests recompute them from the LFSR of Algorithm 5.
    package static let roundConstants: [UInt64] = [
        0x0000_0000_0000_0001, 0x0000_0000_0000_8082, 0x8000_0000_0000_808A, 0x8000_0000_8000_8000,
        0x0000_0000_0000_808B, 0x0000_0000_8000_0001, 0x8000_0000_8000_8081, 0x8000_0000_0000_8009,
        0x0000_0000_0000_008A, 0x0000_0000_0000_0088, 0x0000_0000_8000_8009, 0x0000_0000_8000_000A,
        0x0000_0000_8000_808B, 0x8000_0000_0000_008B, 0x8000_0000_0000_8089, 0x8000_0000_0000_8003,
        0x8000_0000_0000_8002, 0x8000_0000_0000_0080, 0x0000_0000_0000_800A, 0x8000_0000_8000_000A,
        0x8000_0000_8000_8081, 0x8000_0000_0000_8080, 0x0000_0000_8000_0001, 0x8000_0000_8000_8008,
    ]

    /// The rho rotation offsets r[x, y], at index `x + 5y` (FIPS 202 section 3.2.2, Table 2,
    /// reduced mod 64). The permutation below has them written out; this table is what the
    /// tests check against Algorithm 2.
    package static let rotationOffsets: [Int] = [
        0, 1, 62, 28, 27,
        36, 44, 6, 55, 20,
        3, 10, 43, 25, 39,
        41, 45, 15, 21, 8,
        18, 2, 61, 56, 14,
    ]

    @inline(__always)
    private static func rotl(_ value: UInt64, _ count: UInt64) -> UInt64 {
        (value &<< count) | (value &>> (64 &- count))
    }

    /// Applies Keccak-f[1600] = Keccak-p[1600, 24] (FIPS 202 section 3.4) to the state.
    package mutating func permute() {
        Self.permute(&lanes)
    }

    /// Keccak-f[1600] on `lanes`: 24 rounds of theta, rho, pi, chi and iota.
    ///
    /// Each round is written out over 25 local lanes `aXY` (lane `(x, y)`):
    /// - theta: `c[x]` is the parity of column `x`; `d[x] = c[x-1] ^ rotl(c[x+1], 1)` is
    ///   XORed into every lane of column `x`.
    /// - rho and pi together: lane `(x, y)`, rotated by `r[x, y]`, moves to
    ///   `(y, 2x + 3y mod 5)` (pi is `A'[x, y] = A[x + 3y mod 5, x]`), giving `bXY`.
    /// - chi: `e[x, y] = b[x, y] ^ (~b[x+1, y] & b[x+2, y])`, which becomes the new `a`.
    /// - iota: the round constant is XORed into lane `(0, 0)`.
    ///
    /// rho, pi and chi are done one output plane (five lanes of equal y) at a time, so that
    /// only five `b` values are live at once: fewer register spills on x86-64, where this
    /// measured a few percent faster than computing all 25 `b` lanes first.
    private static func permute(_ lanes: inout Lanes) {
        var a00 = lanes.0
        var a10 = lanes.1
        var a20 = lanes.2
        var a30 = lanes.3
        var a40 = lanes.4
        var a01 = lanes.5
        var a11 = lanes.6
        var a21 = lanes.7
        var a31 = lanes.8
        var a41 = lanes.9
        var a02 = lanes.10
        var a12 = lanes.11
        var a22 = lanes.12
        var a32 = lanes.13
        var a42 = lanes.14
        var a03 = lanes.15
        var a13 = lanes.16
        var a23 = lanes.17
        var a33 = lanes.18
        var a43 = lanes.19
        var a04 = lanes.20
        var a14 = lanes.21
        var a24 = lanes.22
        var a34 = lanes.23
        var a44 = lanes.24

        for roundConstant in roundConstants {
            // theta
            let c0 = a00 ^ a01 ^ a02 ^ a03 ^ a04
            let c1 = a10 ^ a11 ^ a12 ^ a13 ^ a14
            let c2 = a20 ^ a21 ^ a22 ^ a23 ^ a24
            let c3 = a30 ^ a31 ^ a32 ^ a33 ^ a34
            let c4 = a40 ^ a41 ^ a42 ^ a43 ^ a44
            let d0 = c4 ^ rotl(c1, 1)
            let d1 = c0 ^ rotl(c2, 1)
            let d2 = c1 ^ rotl(c3, 1)
            let d3 = c2 ^ rotl(c4, 1)
            let d4 = c3 ^ rotl(c0, 1)

            // rho, pi and chi, one output plane at a time: b[y, 2x + 3y] = rotl(a[x, y] ^ d[x], r[x, y]),
            // then e[x, y] = b[x, y] ^ (~b[x+1, y] & b[x+2, y]).
            // plane y = 0
            let b00 = a00 ^ d0
            let b10 = rotl(a11 ^ d1, 44)
            let b20 = rotl(a22 ^ d2, 43)
            let b30 = rotl(a33 ^ d3, 21)
            let b40 = rotl(a44 ^ d4, 14)
            let e00 = b00 ^ (~b10 & b20)
            let e10 = b10 ^ (~b20 & b30)
            let e20 = b20 ^ (~b30 & b40)
            let e30 = b30 ^ (~b40 & b00)
            let e40 = b40 ^ (~b00 & b10)
            // plane y = 1
            let b01 = rotl(a30 ^ d3, 28)
            let b11 = rotl(a41 ^ d4, 20)
            let b21 = rotl(a02 ^ d0, 3)
            let b31 = rotl(a13 ^ d1, 45)
            let b41 = rotl(a24 ^ d2, 61)
            let e01 = b01 ^ (~b11 & b21)
            let e11 = b11 ^ (~b21 & b31)
            let e21 = b21 ^ (~b31 & b41)
            let e31 = b31 ^ (~b41 & b01)
            let e41 = b41 ^ (~b01 & b11)
            // plane y = 2
            let b02 = rotl(a10 ^ d1, 1)
            let b12 = rotl(a21 ^ d2, 6)
            let b22 = rotl(a32 ^ d3, 25)
            let b32 = rotl(a43 ^ d4, 8)
            let b42 = rotl(a04 ^ d0, 18)
            let e02 = b02 ^ (~b12 & b22)
            let e12 = b12 ^ (~b22 & b32)
            let e22 = b22 ^ (~b32 & b42)
            let e32 = b32 ^ (~b42 & b02)
            let e42 = b42 ^ (~b02 & b12)
            // plane y = 3
            let b03 = rotl(a40 ^ d4, 27)
            let b13 = rotl(a01 ^ d0, 36)
            let b23 = rotl(a12 ^ d1, 10)
            let b33 = rotl(a23 ^ d2, 15)
            let b43 = rotl(a34 ^ d3, 56)
            let e03 = b03 ^ (~b13 & b23)
            let e13 = b13 ^ (~b23 & b33)
            let e23 = b23 ^ (~b33 & b43)
            let e33 = b33 ^ (~b43 & b03)
            let e43 = b43 ^ (~b03 & b13)
            // plane y = 4
            let b04 = rotl(a20 ^ d2, 62)
            let b14 = rotl(a31 ^ d3, 55)
            let b24 = rotl(a42 ^ d4, 39)
            let b34 = rotl(a03 ^ d0, 41)
            let b44 = rotl(a14 ^ d1, 2)
            let e04 = b04 ^ (~b14 & b24)
            let e14 = b14 ^ (~b24 & b34)
            let e24 = b24 ^ (~b34 & b44)
            let e34 = b34 ^ (~b44 & b04)
            let e44 = b44 ^ (~b04 & b14)

            a00 = e00
            a10 = e10
            a20 = e20
            a30 = e30
            a40 = e40
            a01 = e01
            a11 = e11
            a21 = e21
            a31 = e31
            a41 = e41
            a02 = e02
            a12 = e12
            a22 = e22
            a32 = e32
            a42 = e42
            a03 = e03
            a13 = e13
            a23 = e23
            a33 = e33
            a43 = e43
            a04 = e04
            a14 = e14
            a24 = e24
            a34 = e34
            a44 = e44

            // iota
            a00 ^= roundConstant
        }

        lanes = (
            a00, a10, a20, a30, a40,
            a01, a11, a21, a31, a41,
            a02, a12, a22, a32, a42,
            a03, a13, a23, a33, a43,
            a04, a14, a24, a34, a44
        )
    }
}
