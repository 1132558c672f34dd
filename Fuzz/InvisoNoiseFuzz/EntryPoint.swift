// Entry point of the InvisoNoise fuzz target; docs/fuzzing.md explains both modes.
//
// Fuzzing build (`--sanitize=fuzzer -Xswiftc -DINVISO_FUZZING`): libFuzzer, which
// `-sanitize=fuzzer` links in, provides `main` and calls `LLVMFuzzerTestOneInput` below.
// SwiftPM compiles the module with `-parse-as-library` then, and that mode rejects
// top-level statements even in an inactive `#if` branch, hence `@main` rather than a
// `main.swift`.
//
// Normal build (`swift build`): a replay tool that runs the same entry function over the
// files and directories given as arguments (a corpus, or a crash reproducer), or writes
// the seed corpus with `--write-seeds DIR`.

#if INVISO_FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    NoiseFuzzTarget.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}
#else
import InvisoFuzzSupport

@main
enum EntryPoint {
    static func main() {
        FuzzReplay.main(
            tool: "InvisoNoiseFuzz", arguments: Array(CommandLine.arguments.dropFirst()), seeds: SeedCorpus.inputs,
            run: NoiseFuzzTarget.run)
    }
}
#endif
