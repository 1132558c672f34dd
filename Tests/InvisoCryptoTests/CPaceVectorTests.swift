import Crypto
import Foundation
import InvisoCrypto
import InvisoTesting
import Testing

/// Runs `shared/vectors/cpace/cpace-x25519.json`: draft-irtf-cfrg-cpace-21 Appendix B.1
/// (CPACE-X25519-SHA512) and Appendix A.1/A.3 (string utilities), taken from
/// cfrg/draft-irtf-cfrg-cpace@8fb4056e1b9201927d9f651b9970d9d5660c7892 (tag
/// draft-irtf-cfrg-cpace-21), draft-irtf-cfrg-cpace.md lines 995 and 1303 onward; see the
/// file's `source` fields and shared/vectors/cpace/README.md.
@Suite("CPace draft-21 vectors (X25519, SHA-512)", .enabled(if: SharedVectors.present("cpace/cpace-x25519.json"), SharedVectors.skipComment))
struct CPaceVectorTests {
    struct VectorFile: Decodable {
        struct Text: Decodable {
            let hex: String
        }
        struct Inputs: Decodable {
            let PRS: Text
            let CI: Text
            let sid: String
            let ADa: Text
            let ADb: Text
            let ya: String
            let yb: String
            let DSI: Text
        }
        struct Generator: Decodable {
            let zpad_length: Int
            let generator_string: String
            let hash_generator_string: String
            let decoded_field_element: String
            let g: String
        }
        struct Messages: Decodable {
            let Ya: String
            let Yb: String
        }
        struct Value: Decodable {
            let value: String
        }
        struct ISKInitiatorResponder: Decodable {
            let transcript_ir: String
            let hash_input: String
            let ISK: String
        }
        struct ISKOrdered: Decodable {
            let transcript_oc: String
            let hash_input: String
            let ISK: String
        }
        struct SessionIDOutput: Decodable {
            let ir: String
            let oc: String
        }
        struct ProtocolVector: Decodable {
            let inputs: Inputs
            let generator: Generator
            let messages: Messages
            let K: Value
            let ISK_initiator_responder: ISKInitiatorResponder
            let ISK_parallel_ordered: ISKOrdered
            let sid_output: SessionIDOutput
        }
        struct LowOrderCase: Decodable {
            let name: String
            let u: String
            let q: String
            let must_abort: Bool
        }
        struct LowOrderPoints: Decodable {
            let s: String
            let cases: [LowOrderCase]
        }
        struct PrependLength: Decodable {
            let input: String
            let expected: String
        }
        struct Concatenation: Decodable {
            let inputs: [String]
            let expected: String
        }
        struct Comparison: Decodable {
            let a: String
            let b: String
            let result: Bool
        }
        struct StringUtilities: Decodable {
            let prepend_len: [PrependLength]
            let lv_cat: [Concatenation]
            let lexicographically_larger: [Comparison]
            let o_cat: [Concatenation]
            let transcript_ir: [Concatenation]
            let transcript_oc: [Concatenation]
        }
        struct Suite: Decodable {
            let G_DSI: Text
            let G_DSI_ISK: Text
            let sid_output_prefix: Text
            let H_s_in_bytes: Int
            let neutral_element_I: String
        }
        let draft: String
        let suite: Suite
        let protocol_vector: ProtocolVector
        let low_order_points: LowOrderPoints
        let string_utilities: StringUtilities
    }

    static func load() throws -> VectorFile? {
        guard let url = sharedVectorFile("cpace/cpace-x25519.json", describing: "CPace vectors") else { return nil }
        return try JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: url))
    }

    @Test("suite constants")
    func suiteConstants() throws {
        guard let file = try Self.load() else { return }
        #expect(file.draft == "draft-irtf-cfrg-cpace-21")
        #expect(CPace.dsi.hex == file.suite.G_DSI.hex)
        #expect(CPace.dsiISK.hex == file.suite.G_DSI_ISK.hex)
        #expect(CPace.sessionIDOutputPrefix.hex == file.suite.sid_output_prefix.hex)
        #expect(CPace.hashBlockByteCount == file.suite.H_s_in_bytes)
        #expect(file.suite.neutral_element_I == String(repeating: "00", count: 32))
    }

    @Test("B.1 protocol vector: generator, shares, K, ISK for both settings, sid_output")
    func protocolVector() throws {
        guard let file = try Self.load() else { return }
        let vector = file.protocol_vector
        let input = vector.inputs
        func bytes(_ hex: String) throws -> [UInt8] { try #require([UInt8](hex: hex), "bad hex \(hex)") }
        let prs = try bytes(input.PRS.hex)
        let ci = try bytes(input.CI.hex)
        let sid = try bytes(input.sid)
        let ada = try bytes(input.ADa.hex)
        let adb = try bytes(input.ADb.hex)
        #expect(CPace.dsi.hex == input.DSI.hex)

        // B.1.1 calculate_generator, step by step.
        let generator = vector.generator
        #expect(CPace.zeroPaddingLength(prsByteCount: prs.count) == generator.zpad_length)
        let generatorString = CPace.generatorString(prs: prs, ci: ci, sid: sid)
        #expect(generatorString.hex == generator.generator_string)
        let hash = Array(SHA512.hash(data: generatorString).prefix(32))
        #expect(hash.hex == generator.hash_generator_string)
        var decoded = hash
        decoded[31] &= 0x7f
        #expect(decoded.hex == generator.decoded_field_element)
        #expect(Elligator2.mapToCurve25519(decoded)?.u.hex == generator.g)
        let g = CPace.calculateGenerator(prs: SecretBytes(prs), ci: ci, sid: sid)
        #expect(g == SecretBytes(try bytes(generator.g)))

        // B.1.2–B.1.4: the shares from the vector's scalars, and K.
        func party(_ role: CPace.Role, scalar: String, ad: [UInt8]) throws -> CPace.Party {
            var random = FixedBytesGenerator(try bytes(scalar))
            let party = try CPace.Party(
                role: role, prs: SecretBytes(prs), ci: ci, sid: sid, associatedData: ad, using: &random)
            #expect(random.isExhausted)
            return party
        }
        var a = try party(.initiator, scalar: input.ya, ad: ada)
        var b = try party(.responder, scalar: input.yb, ad: adb)
        #expect(a.share.hex == vector.messages.Ya)
        #expect(b.share.hex == vector.messages.Yb)
        let k = SecretBytes(try bytes(vector.K.value))
        for (scalar, peer) in [(input.ya, vector.messages.Yb), (input.yb, vector.messages.Ya)] {
            let key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: try bytes(scalar))
            #expect(CPace.scalarMultVerify(key, try bytes(peer)) == k)
        }

        // B.1.5 initiator/responder: the messages are the transcript halves.
        let ir = vector.ISK_initiator_responder
        #expect(CPace.transcriptIR(a.share, ada, b.share, adb).hex == ir.transcript_ir)
        #expect((a.message + b.message).hex == ir.transcript_ir)
        let irHashInput =
            k.withUnsafeBytes { CPace.lvCat(CPace.dsiISK, sid, Array($0)) } + (try bytes(ir.transcript_ir))
        #expect(irHashInput.hex == ir.hash_input)
        let expectedIR = SecretBytes(try bytes(ir.ISK))
        #expect(Array(SHA512.hash(data: irHashInput)).hex == ir.ISK)
        let outputA = try a.receive(b.message)
        let outputB = try b.receive(a.message)
        #expect(outputA.intermediateSessionKey == expectedIR)
        #expect(outputB.intermediateSessionKey == expectedIR)
        #expect(outputA.peerAssociatedData == adb && outputB.peerAssociatedData == ada)
        // B.1.7, initiator/responder transcript.
        #expect(outputA.sessionIDOutput.hex == vector.sid_output.ir)
        #expect(outputB.sessionIDOutput.hex == vector.sid_output.ir)

        // B.1.6 parallel (symmetric) setting with the same scalars.
        let oc = vector.ISK_parallel_ordered
        #expect(CPace.transcriptOC(a.share, ada, b.share, adb).hex == oc.transcript_oc)
        let ocHashInput =
            k.withUnsafeBytes { CPace.lvCat(CPace.dsiISK, sid, Array($0)) } + (try bytes(oc.transcript_oc))
        #expect(ocHashInput.hex == oc.hash_input)
        var symmetricA = try party(.symmetric, scalar: input.ya, ad: ada)
        var symmetricB = try party(.symmetric, scalar: input.yb, ad: adb)
        let expectedOC = SecretBytes(try bytes(oc.ISK))
        let symmetricOutputA = try symmetricA.receive(symmetricB.message)
        let symmetricOutputB = try symmetricB.receive(symmetricA.message)
        #expect(symmetricOutputA.intermediateSessionKey == expectedOC)
        #expect(symmetricOutputB.intermediateSessionKey == expectedOC)
        #expect(symmetricOutputA.sessionIDOutput.hex == vector.sid_output.oc)
        #expect(symmetricOutputB.sessionIDOutput.hex == vector.sid_output.oc)
        print("CPace protocol vectors: 1 ran (generator chain, Ya, Yb, K, ISK ir/oc, sid_output ir/oc)")
    }

    @Test("B.1.10 scalar_mult_vfy on low-order and non-canonical u; protocol aborts exactly on G.I")
    func lowOrderPoints() throws {
        guard let file = try Self.load() else { return }
        let points = file.low_order_points
        let scalar = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: try #require([UInt8](hex: points.s)))
        // A party waiting for its peer, from the protocol vector's inputs.
        let prs = SecretBytes(Array("Password".utf8))
        var random = SeededGenerator(seed: 10)
        let template = try CPace.Party(role: .initiator, prs: prs, sid: [1, 2, 3], using: &random)
        var honestPeer = try CPace.Party(role: .responder, prs: prs, sid: [1, 2, 3], using: &random)
        let expected = try honestPeer.receive(template.message).intermediateSessionKey

        var ran = 0
        for lowOrder in points.cases {
            let u = try #require([UInt8](hex: lowOrder.u), "\(lowOrder.name)")
            let q = try #require([UInt8](hex: lowOrder.q), "\(lowOrder.name)")
            let result = CPace.scalarMultVerify(scalar, u)
            if lowOrder.must_abort {
                #expect(result == nil, "\(lowOrder.name) must give G.I")
                #expect(q == [UInt8](repeating: 0, count: 32))
            } else {
                #expect(result == SecretBytes(q), "\(lowOrder.name)")
            }
            // The same share inside a protocol run.
            var party = template
            do {
                _ = try party.receive(CPace.lvCat(u, []))
                #expect(!lowOrder.must_abort, "\(lowOrder.name) was accepted")
                #expect(party.isFinished)
            } catch {
                #expect(lowOrder.must_abort, "\(lowOrder.name) was rejected")
                #expect(error == .invalidPeerShare)
                #expect(!party.isFinished)
                // Nothing changed: the honest message still gives the honest key.
                #expect(try party.receive(honestPeer.message).intermediateSessionKey == expected)
            }
            ran += 1
        }
        print("CPace low-order vectors: \(ran) ran")
        #expect(ran == 12, "expected 12 low-order vectors, ran \(ran)")
    }

    @Test("A.1 and A.3 string utilities")
    func stringUtilities() throws {
        guard let file = try Self.load() else { return }
        let utilities = file.string_utilities
        func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }
        var ran = 0

        for vector in utilities.prepend_len {
            let input: [UInt8] =
                switch vector.input {
                case "b\"\"": []
                case "b\"1234\"": ascii("1234")
                case "bytes(range(127))": (0..<127).map { UInt8($0) }
                case "bytes(range(128))": (0..<128).map { UInt8($0) }
                default: try #require(nil as [UInt8]?, "unknown prepend_len input \(vector.input)")
                }
            #expect(CPace.prependLength(input).hex == vector.expected, "prepend_len(\(vector.input))")
            ran += 1
        }
        for vector in utilities.lv_cat {
            let parts = vector.inputs.map(ascii)
            #expect(parts.flatMap(CPace.prependLength).hex == vector.expected)
            #expect(CPace.lvCat(parts[0], parts[1], parts[2], parts[3]).hex == vector.expected)
            ran += 1
        }
        for vector in utilities.lexicographically_larger {
            let a = try #require([UInt8](hex: vector.a))
            let b = try #require([UInt8](hex: vector.b))
            #expect(CPace.lexicographicallyLarger(a, b) == vector.result, "\(vector.a) > \(vector.b)")
            ran += 1
        }
        for vector in utilities.o_cat {
            let parts = vector.inputs.map(ascii)
            #expect(CPace.orderedConcatenation(parts[0], parts[1]).hex == vector.expected)
            ran += 1
        }
        for vector in utilities.transcript_ir {
            let p = vector.inputs.map(ascii)
            #expect(CPace.transcriptIR(p[0], p[1], p[2], p[3]).hex == vector.expected)
            ran += 1
        }
        for vector in utilities.transcript_oc {
            let p = vector.inputs.map(ascii)
            #expect(CPace.transcriptOC(p[0], p[1], p[2], p[3]).hex == vector.expected)
            ran += 1
        }
        print("CPace string-utility vectors: \(ran) ran")
        #expect(ran == 17, "expected 17 string-utility vectors, ran \(ran)")
    }
}
