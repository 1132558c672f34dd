import Crypto
import Foundation
import InvisoCrypto
import InvisoTesting
import Testing

/// SHA-3 is swift-crypto's (public from the OS 26 floor on); our Keccak sponge is kept
/// for SHAKE, which swift-crypto lacks. These run the same FIPS 202 and hashlib vectors
/// through swift-crypto's SHA3-256/512, next to our SHAKE.
func sha3_256Digest(_ message: [UInt8]) -> [UInt8] { Array(Crypto.SHA3_256.hash(data: message)) }

func sha3_512Digest(_ message: [UInt8]) -> [UInt8] { Array(Crypto.SHA3_512.hash(data: message)) }

// MARK: - Keccak-f[1600]

/// A literal transcription of FIPS 202 section 3 (Algorithms 1–7), slow and independent of
/// the unrolled permutation: its constants are computed here, not taken from the tables.
enum ReferenceKeccak {
    /// Algorithm 5, rc(t): one output bit of the LFSR, on a bit list R[0..7].
    static func rc(_ t: Int) -> UInt64 {
        if t % 255 == 0 { return 1 }
        var r: [UInt8] = [1, 0, 0, 0, 0, 0, 0, 0]
        for _ in 1...(t % 255) {
            r.insert(0, at: 0)  // R = 0 || R
            r[0] ^= r[8]
            r[4] ^= r[8]
            r[5] ^= r[8]
            r[6] ^= r[8]
            r.removeLast()  // R = Trunc_8(R)
        }
        return UInt64(r[0])
    }

    /// Algorithm 6, steps 2–3 (l = 6): RC[2^j - 1] = rc(j + 7 i_r).
    static func roundConstant(_ round: Int) -> UInt64 {
        var lane: UInt64 = 0
        for j in 0...6 {
            lane |= rc(j + 7 * round) << ((1 << j) - 1)
        }
        return lane
    }

    /// Algorithm 2, step 3: the rho offsets, offsets[x][y] = (t+1)(t+2)/2 mod 64.
    static func rotationOffsets() -> [[Int]] {
        var offsets = [[Int]](repeating: [Int](repeating: 0, count: 5), count: 5)
        var (x, y) = (1, 0)
        for t in 0..<24 {
            offsets[x][y] = ((t + 1) * (t + 2) / 2) % 64
            (x, y) = (y, (2 * x + 3 * y) % 5)
        }
        return offsets
    }

    static func rotl(_ lane: UInt64, _ count: Int) -> UInt64 {
        count == 0 ? lane : (lane << UInt64(count)) | (lane >> UInt64(64 - count))
    }

    /// Algorithm 7, Keccak-p[1600, 24], on lanes a[x][y].
    static func permute(_ state: [[UInt64]]) -> [[UInt64]] {
        let offsets = rotationOffsets()
        var a = state
        for round in 0..<24 {
            // theta (Algorithm 1): C[x] = parity of column x; D[x] = C[x-1] ^ rot(C[x+1], 1).
            let c = (0..<5).map { x in a[x][0] ^ a[x][1] ^ a[x][2] ^ a[x][3] ^ a[x][4] }
            for x in 0..<5 {
                let d = c[(x + 4) % 5] ^ rotl(c[(x + 1) % 5], 1)
                for y in 0..<5 { a[x][y] ^= d }
            }
            // rho (Algorithm 2).
            for x in 0..<5 {
                for y in 0..<5 { a[x][y] = rotl(a[x][y], offsets[x][y]) }
            }
            // pi (Algorithm 3): A'[x, y] = A[(x + 3y) mod 5, x].
            let beforePi = a
            for x in 0..<5 {
                for y in 0..<5 { a[x][y] = beforePi[(x + 3 * y) % 5][x] }
            }
            // chi (Algorithm 4): A'[x, y] = A[x, y] ^ (~A[x+1, y] & A[x+2, y]).
            let beforeChi = a
            for x in 0..<5 {
                for y in 0..<5 {
                    a[x][y] = beforeChi[x][y] ^ (~beforeChi[(x + 1) % 5][y] & beforeChi[(x + 2) % 5][y])
                }
            }
            // iota (Algorithm 6).
            a[0][0] ^= roundConstant(round)
        }
        return a
    }

    /// Lanes of a `KeccakState` as a[x][y].
    static func lanes(of state: KeccakState) -> [[UInt64]] {
        (0..<5).map { x in (0..<5).map { y in state[lane: x + 5 * y] } }
    }
}

@Suite("Keccak-f[1600] permutation")
struct KeccakPermutationTests {
    // XKCP, tests/TestVectors/KeccakF-1600-IntermediateValues.txt: the all-zero state after
    // one and after two applications of Keccak-f[1600], lanes in order x + 5y.
    static let zeroPermutedOnce: [UInt64] = [
        0xF125_8F79_40E1_DDE7, 0x84D5_CCF9_33C0_478A, 0xD598_261E_A65A_A9EE, 0xBD15_4730_6F80_494D,
        0x8B28_4E05_6253_D057, 0xFF97_A42D_7F8E_6FD4, 0x90FE_E5A0_A446_47C4, 0x8C5B_DA0C_D619_2E76,
        0xAD30_A6F7_1B19_059C, 0x3093_5AB7_D08F_FC64, 0xEB5A_A93F_2317_D635, 0xA9A6_E626_0D71_2103,
        0x81A5_7C16_DBCF_555F, 0x43B8_31CD_0347_C826, 0x01F2_2F1A_11A5_569F, 0x05E5_635A_21D9_AE61,
        0x64BE_FEF2_8CC9_70F2, 0x6136_7095_7BC4_6611, 0xB87C_5A55_4FD0_0ECB, 0x8C3E_E88A_1CCF_32C8,
        0x940C_7922_AE3A_2614, 0x1841_F924_A2C5_09E4, 0x16F5_3526_E704_65C2, 0x75F6_44E9_7F30_A13B,
        0xEAF1_FF7B_5CEC_A249,
    ]
    static let zeroPermutedTwice: [UInt64] = [
        0x2D5C_954D_F96E_CB3C, 0x6A33_2CD0_7057_B56D, 0x093D_8D12_70D7_6B6C, 0x8A20_D9B2_5569_D094,
        0x4F9C_4F99_E5E7_F156, 0xF957_B9A2_DA65_FB38, 0x8577_3DAE_1275_AF0D, 0xFAF4_F247_C3D8_10F7,
        0x1F1B_9EE6_F79A_8759, 0xE4FE_CC0F_EE98_B425, 0x68CE_61B6_B9CE_68A1, 0xDEEA_66C4_BA8F_974F,
        0x33C4_3D83_6EAF_B1F5, 0xE006_5404_2719_DBD9, 0x7CF8_A9F0_0983_1265, 0xFD54_49A6_BF17_4743,
        0x97DD_AD33_D899_4B40, 0x48EA_D5FC_5D0B_E774, 0xE3B8_C8EE_55B7_B03C, 0x91A0_226E_649E_42E9,
        0x900E_3129_E7BA_DD7B, 0x202A_9EC5_FAA3_CCE8, 0x5B34_0246_4E1C_3DB6, 0x609F_4E62_A44C_1059,
        0x20D0_6CD2_6A8F_BF5C,
    ]

    @Test func zeroStateMatchesXKCPIntermediateValues() {
        var state = KeccakState()
        state.permute()
        #expect((0..<25).map { state[lane: $0] } == Self.zeroPermutedOnce)
        state.permute()
        #expect((0..<25).map { state[lane: $0] } == Self.zeroPermutedTwice)
    }

    @Test func roundConstantsFollowAlgorithm5() {
        #expect(KeccakState.roundConstants.count == 24)
        #expect(KeccakState.roundConstants == (0..<24).map { ReferenceKeccak.roundConstant($0) })
    }

    @Test func rotationOffsetsFollowAlgorithm2() {
        let offsets = ReferenceKeccak.rotationOffsets()
        let byLaneIndex: [Int] = (0..<25).map { (index: Int) -> Int in offsets[index % 5][index / 5] }
        #expect(KeccakState.rotationOffsets == byLaneIndex)
    }

    @Test func matchesTheStepByStepReferenceOnRandomStates() {
        var generator = SeededGenerator(seed: 0x5EED_0F16)
        var checked = 0
        for _ in 0..<64 {
            var state = KeccakState()
            for index in 0..<25 {
                state[lane: index] = generator.next()
            }
            let expected = ReferenceKeccak.permute(ReferenceKeccak.lanes(of: state))
            state.permute()
            #expect(ReferenceKeccak.lanes(of: state) == expected)
            checked += 1
        }
        #expect(checked == 64)
    }
}

// MARK: - Published example values

@Suite("SHA-3 and SHAKE published examples")
struct KeccakKnownAnswerTests {
    // NIST, "Cryptographic Standards and Guidelines: Examples with Intermediate Values",
    // FIPS 202 (https://csrc.nist.gov/projects/cryptographic-standards-and-guidelines/example-values):
    // SHA3-256_Msg0 and SHA3-256_1600 (200 bytes of 0xA3); SHAKE128_Msg0 and SHAKE256_Msg0
    // (first 32 and 64 of their 512 output bytes). Each was also checked against Python 3.11.7's
    // hashlib (OpenSSL 3.0.19).
    static let sha3_256Empty = "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a"
    static let sha3_256A3x200 = "79f38adec5c20307a98ef76e8324afbfd46cfd81b22e3973c65fa1bd9de31787"
    static let shake128Empty32 = "7f9c2ba4e88f827d616045507605853ed73b8093f6efbc88eb1a6eacfa66ef26"
    static let shake256Empty64 = """
        46b9dd2b0ba88d13233b3feb743eeb243fcd52ea62b81b82b50c27646ed5762f\
        d75dc4ddd8c0f200cb05019d67b592f6fc821c49479ab48640292eacb3b7c4be
        """
    // SHA3-256("abc") and SHA3-512("abc"): the widely published values, checked against
    // Python 3.11.7's hashlib (OpenSSL 3.0.19).
    static let sha3_256ABC = "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"
    static let sha3_512ABC = """
        b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e\
        10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0
        """

    @Test func sha3_256() {
        #expect(sha3_256Digest([UInt8]()) == bytes(hex: Self.sha3_256Empty))
        #expect(sha3_256Digest(Array("abc".utf8)) == bytes(hex: Self.sha3_256ABC))
        #expect(sha3_256Digest([UInt8](repeating: 0xA3, count: 200)) == bytes(hex: Self.sha3_256A3x200))
    }

    @Test func sha3_512() {
        #expect(sha3_512Digest(Array("abc".utf8)) == bytes(hex: Self.sha3_512ABC))
    }

    @Test func shake() {
        #expect(Keccak.SHAKE128.hash([UInt8](), outputByteCount: 32) == bytes(hex: Self.shake128Empty32))
        #expect(Keccak.SHAKE256.hash([UInt8](), outputByteCount: 64) == bytes(hex: Self.shake256Empty64))
        #expect(Keccak.SHAKE256.hash([UInt8](), outputByteCount: 0).isEmpty)
    }
}

// MARK: - Vectors generated by Python's hashlib

/// `Resources/keccak-hashlib.json`, written by `scripts/gen-keccak-vectors.py`.
struct KeccakVectorFile: Decodable {
    struct Case: Decodable, CustomStringConvertible {
        let algorithm: String
        let rate: Int
        let messageLength: Int
        let outputLength: Int
        let expected: String

        var description: String { "\(algorithm) message \(messageLength) output \(outputLength)" }
    }

    let python: String
    let caseCount: Int
    let cases: [Case]

    static let name = "keccak-hashlib"

    static func load() throws -> KeccakVectorFile {
        try TestResources.load(KeccakVectorFile.self, named: name)
    }
}

@Suite("SHA-3 and SHAKE against Python hashlib")
struct KeccakHashlibTests {
    /// One-shot, then byte-at-a-time absorbing (and, for SHAKE, byte-at-a-time squeezing).
    /// Returns false for an unknown algorithm (which then fails the count).
    static func run(_ vector: KeccakVectorFile.Case) -> Bool {
        let message = vectorMessage(count: vector.messageLength)
        let expected = bytes(hex: vector.expected)
        let actual: [UInt8]
        switch vector.algorithm {
        case "sha3-256":
            #expect(vector.rate == Crypto.SHA3_256.blockByteCount)
            actual = sha3_256Digest(message)
            var hasher = Crypto.SHA3_256()
            for byte in message { hasher.update(data: [byte]) }
            #expect(Array(hasher.finalize()) == expected, "byte-at-a-time \(vector)")
        case "sha3-512":
            #expect(vector.rate == Crypto.SHA3_512.blockByteCount)
            actual = sha3_512Digest(message)
            var hasher = Crypto.SHA3_512()
            for byte in message { hasher.update(data: [byte]) }
            #expect(Array(hasher.finalize()) == expected, "byte-at-a-time \(vector)")
        case "shake128":
            #expect(vector.rate == Keccak.SHAKE128.blockByteCount)
            actual = Keccak.SHAKE128.hash(message, outputByteCount: vector.outputLength)
            var xof = Keccak.SHAKE128()
            for byte in message { xof.update([byte]) }
            #expect((0..<vector.outputLength).flatMap { _ in xof.squeeze(1) } == expected, "bytewise \(vector)")
        case "shake256":
            #expect(vector.rate == Keccak.SHAKE256.blockByteCount)
            actual = Keccak.SHAKE256.hash(message, outputByteCount: vector.outputLength)
            var xof = Keccak.SHAKE256()
            for byte in message { xof.update([byte]) }
            #expect((0..<vector.outputLength).flatMap { _ in xof.squeeze(1) } == expected, "bytewise \(vector)")
        default:
            Issue.record("unknown algorithm \(vector.algorithm)")
            return false
        }
        #expect(actual.count == vector.outputLength, "\(vector)")
        #expect(actual == expected, "\(vector)")
        return true
    }

    @Test func everyGeneratedCase() throws {
        let file = try KeccakVectorFile.load()
        var ran = 0
        for vector in file.cases where Self.run(vector) {
            ran += 1
        }
        #expect(ran > 0)
        #expect(ran == file.caseCount)
        #expect(ran == file.cases.count)
    }

    /// Each function is checked on its own, so a file that lost one of them cannot pass.
    @Test(arguments: ["sha3-256", "sha3-512", "shake128", "shake256"])
    func everyFunctionHasCases(algorithm: String) throws {
        let file = try KeccakVectorFile.load()
        let cases = file.cases.filter { $0.algorithm == algorithm }
        #expect(cases.count >= 8)
        // Inputs around the rate: rate - 1 puts the suffix and the final padding bit in one
        // byte; rate makes padding a whole block.
        let rate = try #require(cases.first?.rate)
        let lengths = Set(cases.map(\.messageLength))
        #expect(lengths.isSuperset(of: [0, 1, rate - 1, rate, rate + 1, 2 * rate]))
        if algorithm.hasPrefix("shake") {
            #expect(Set(cases.map(\.outputLength)).isSuperset(of: [1, 32, rate, rate + 1, 500]))
        }
    }
}

// MARK: - Incremental absorbing and squeezing

@Suite("SHA-3 and SHAKE incremental use")
struct KeccakIncrementalTests {
    /// Feeds `message` in random pieces, alternating the two `update` entry points.
    static func absorb(
        _ message: [UInt8], rate: Int, using generator: inout SeededGenerator,
        into update: (UnsafeRawBufferPointer, Bool) -> Void
    ) {
        var offset = 0
        for (index, size) in randomSplit(count: message.count, blockSize: rate, using: &generator).enumerated() {
            message[offset..<offset + size].withUnsafeBytes { update($0, index % 2 == 0) }
            offset += size
        }
        precondition(offset == message.count)
    }

    static func randomMessage(maxLength: Int, using generator: inout SeededGenerator) -> [UInt8] {
        let length = Int.random(in: 0...maxLength, using: &generator)
        return (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    @Test func sha3SplitsMatchOneShot() {
        var generator = SeededGenerator(seed: 0x5EED_3001)
        for round in 0..<150 {
            let message =
                round < 6
                ? vectorMessage(count: round * 136)
                : Self.randomMessage(maxLength: 700, using: &generator)
            var narrow = Crypto.SHA3_256()
            Self.absorb(message, rate: 136, using: &generator) { piece, asBytes in
                if asBytes { narrow.update(data: Array(piece)) } else { narrow.update(bufferPointer: piece) }
            }
            #expect(Array(narrow.finalize()) == sha3_256Digest(message), "SHA3-256 length \(message.count)")

            var wide = Crypto.SHA3_512()
            Self.absorb(message, rate: 72, using: &generator) { piece, asBytes in
                if asBytes { wide.update(data: Array(piece)) } else { wide.update(bufferPointer: piece) }
            }
            #expect(Array(wide.finalize()) == sha3_512Digest(message), "SHA3-512 length \(message.count)")
        }
    }

    /// Random absorb splits and random squeeze splits (some empty, some a whole block) give
    /// the same stream as one long one-shot squeeze.
    @Test func shakeSplitsMatchOneShot() {
        var generator = SeededGenerator(seed: 0x5EED_3002)
        for round in 0..<150 {
            let message = Self.randomMessage(maxLength: 600, using: &generator)
            let outputLength = round < 4 ? round * 168 : Int.random(in: 0...1200, using: &generator)

            let expected128 = Keccak.SHAKE128.hash(message, outputByteCount: outputLength)
            var xof128 = Keccak.SHAKE128()
            Self.absorb(message, rate: 168, using: &generator) { piece, asBytes in
                if asBytes { xof128.update(Array(piece)) } else { xof128.update(bufferPointer: piece) }
            }
            var output128: [UInt8] = []
            for (index, size) in randomSplit(count: outputLength, blockSize: 168, using: &generator).enumerated() {
                if index % 2 == 0 {
                    output128 += xof128.squeeze(size)
                } else {
                    var piece = [UInt8](repeating: 0, count: size)
                    piece.withUnsafeMutableBytes { xof128.squeeze(into: $0) }
                    output128 += piece
                }
            }
            #expect(output128 == expected128, "SHAKE128 message \(message.count) output \(outputLength)")

            let expected256 = Keccak.SHAKE256.hash(message, outputByteCount: outputLength)
            var xof256 = Keccak.SHAKE256()
            Self.absorb(message, rate: 136, using: &generator) { piece, asBytes in
                if asBytes { xof256.update(Array(piece)) } else { xof256.update(bufferPointer: piece) }
            }
            var output256: [UInt8] = []
            for (index, size) in randomSplit(count: outputLength, blockSize: 136, using: &generator).enumerated() {
                if index % 2 == 0 {
                    output256 += xof256.squeeze(size)
                } else {
                    var piece = [UInt8](repeating: 0, count: size)
                    piece.withUnsafeMutableBytes { xof256.squeeze(into: $0) }
                    output256 += piece
                }
            }
            #expect(output256 == expected256, "SHAKE256 message \(message.count) output \(outputLength)")
        }
    }

    @Test func shorterOutputIsAPrefixOfLongerOutput() {
        let message = vectorMessage(count: 333)
        let long = Keccak.SHAKE256.hash(message, outputByteCount: 2000)
        for count in [0, 1, 135, 136, 137, 272, 1999] {
            #expect(Keccak.SHAKE256.hash(message, outputByteCount: count) == Array(long.prefix(count)))
        }
    }

    @Test func copiesOfAnXOFFork() {
        let message = vectorMessage(count: 300)
        var xof = Keccak.SHAKE128()
        xof.update(message)
        let head = xof.squeeze(50)
        var fork = xof
        let middle = xof.squeeze(400)
        #expect(fork.squeeze(400) == middle)
        let tail = fork.squeeze(10)
        #expect(head + middle + tail == Keccak.SHAKE128.hash(message, outputByteCount: 460))
        #expect(xof.squeeze(10) == tail)
    }
}

// MARK: - HashFunction digests, descriptions and misuse

@Suite("SHAKE API details")
struct KeccakAPITests {
    @Test func sizes() {
        #expect(Keccak.SHAKE128.blockByteCount == 168)
        #expect(Keccak.SHAKE256.blockByteCount == 136)
    }

    @Test func descriptionsShowNoState() {
        var xof = Keccak.SHAKE256()
        xof.update(vectorMessage(count: 40))
        #expect(String(describing: xof) == "Keccak.SHAKE256(absorbing)")
        _ = xof.squeeze(1)
        #expect(String(reflecting: xof) == "Keccak.SHAKE256(squeezing)")
        #expect(Mirror(reflecting: xof).children.isEmpty)
        #expect(String(describing: Keccak.SHAKE128()) == "Keccak.SHAKE128(absorbing)")
        var dumped = ""
        dump(Keccak.SHAKE128(), to: &dumped)
        #expect(!dumped.contains("sponge"))
    }

    @Test func absorbingAfterSqueezingTraps() async {
        await #expect(processExitsWith: .failure) {
            var xof = Keccak.SHAKE128()
            xof.update([1, 2, 3] as [UInt8])
            _ = xof.squeeze(16)
            xof.update([4] as [UInt8])
        }
        await #expect(processExitsWith: .failure) {
            var xof = Keccak.SHAKE256()
            _ = xof.squeeze(0)  // even an empty squeeze ends the input
            [UInt8](repeating: 0, count: 10).withUnsafeBytes { xof.update(bufferPointer: $0) }
        }
    }

    @Test func negativeOutputLengthTraps() async {
        await #expect(processExitsWith: .failure) {
            _ = Keccak.SHAKE256.hash([UInt8](), outputByteCount: -1)
        }
        await #expect(processExitsWith: .failure) {
            var xof = Keccak.SHAKE128()
            _ = xof.squeeze(-5)
        }
    }
}
