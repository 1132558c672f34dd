// Entry point of the InvisoNearby fuzz target (docs/fuzzing.md).
//
// Fuzzing build (`--sanitize=fuzzer -Xswiftc -DINVISO_FUZZING`): libFuzzer provides `main`
// and calls `LLVMFuzzerTestOneInput`. Normal build: a replay tool over files/directories,
// or `--write-seeds DIR` to write the seed corpus.

#if INVISO_FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    NearbyFuzzTarget.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}
#else
import Foundation
import InvisoFuzzSupport

@main
enum EntryPoint {
    static func main() {
        FuzzReplay.main(
            tool: "InvisoNearbyFuzz", arguments: Array(CommandLine.arguments.dropFirst()),
            seeds: { NearbyFuzzTarget.seeds().enumerated().map { (String(format: "%03d", $0.offset), $0.element) } },
            run: NearbyFuzzTarget.run)
    }
}
#endif
