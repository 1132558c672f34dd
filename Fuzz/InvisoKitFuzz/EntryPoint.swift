// InvisoKitFuzz (docs/fuzzing.md): libFuzzer's entry in the fuzzing build
// (`-DINVISO_FUZZING`), the replay tool (`FILE|DIR...`, `--write-seeds DIR`) otherwise.
internal import InvisoFuzzSupport

#if INVISO_FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    KitFuzzTarget.run(FuzzReplay.bytes(data, size))
    return 0
}
#else
@main enum EntryPoint {
    static func main() { FuzzReplay.main(tool: "InvisoKitFuzz", seeds: KitFuzzTarget.seeds(), run: KitFuzzTarget.run) }
}
#endif
