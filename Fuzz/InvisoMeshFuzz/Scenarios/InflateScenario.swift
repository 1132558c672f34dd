import InvisoMesh
internal import InvisoFuzzSupport

/// `Inflate.decompress` on arbitrary bytes with a limit of 0…65,535 from the input: the
/// output never exceeds the limit, and decoding is deterministic.
enum InflateScenario {
    static func run(_ input: inout FuzzInput) {
        let limit = Int(input.uint16())
        let stream = input.rest()
        guard let output = try? Inflate.decompress(stream, limit: limit) else { return }
        invariant(output.count <= limit, "inflate wrote past its limit")
        // With exactly the room it needs it succeeds again, with one byte less it cannot.
        invariant((try? Inflate.decompress(stream, limit: output.count)) == output, "inflate is not deterministic")
        if !output.isEmpty {
            invariant((try? Inflate.decompress(stream, limit: output.count - 1)) == nil, "inflate ignored a smaller limit")
        }
    }
}
