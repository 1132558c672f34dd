// Entry point of the InvisoMesh fuzz target; docs/fuzzing.md explains both modes.
//
// Fuzzing build (`--sanitize=fuzzer -Xswiftc -DINVISO_FUZZING`): libFuzzer provides `main`
// and calls `LLVMFuzzerTestOneInput` below. SwiftPM compiles the module with
// `-parse-as-library` then, which rejects top-level statements even in an inactive `#if`
// branch, hence `@main` rather than a `main.swift`.
//
// Normal build (`swift build`): a replay tool that runs the same entry function over the
// files and directories given as arguments, or writes the seed corpus with
// `--write-seeds DIR`.

#if INVISO_FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    MeshFuzzTarget.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}
#else
import InvisoFuzzSupport

@main
enum EntryPoint {
    static func main() {
        FuzzReplay.main(
            tool: "InvisoMeshFuzz", arguments: Array(CommandLine.arguments.dropFirst()), seeds: SeedCorpus.inputs,
            run: MeshFuzzTarget.run)
    }
}
#endif
