// Entry point of the InvisoSignal fuzz target (docs/fuzzing.md).
//
// Fuzzing build (`--sanitize=fuzzer -Xswiftc -DINVISO_FUZZING`): libFuzzer provides `main`
// and calls `LLVMFuzzerTestOneInput`. Normal build: a replay tool over files/directories,
// or `--write-seeds DIR` to write the seed corpus.

#if INVISO_FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    SignalFuzzTarget.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}
#else
import Foundation

@main
enum EntryPoint {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "--write-seeds", arguments.count == 2 {
            let directory = URL(fileURLWithPath: arguments[1])
            try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let seeds = SignalFuzzTarget.seeds()
            for (index, seed) in seeds.enumerated() {
                _ = FileManager.default.createFile(
                    atPath: directory.appendingPathComponent(String(format: "seed-%03d", index)).path, contents: Data(seed))
            }
            print("wrote \(seeds.count) seed inputs to \(arguments[1])")
            return
        }
        let paths = arguments.filter { !$0.hasPrefix("-") }
        guard !paths.isEmpty else {
            FileHandle.standardError.write(Data("usage: InvisoSignalFuzz FILE|DIR... | --write-seeds DIR\n".utf8))
            exit(2)
        }
        var replayed = 0
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                FileHandle.standardError.write(Data("no such file: \(path)\n".utf8))
                exit(2)
            }
            let files =
                isDirectory.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { "\(path)/\($0)" }
                : [path]
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else { continue }
                SignalFuzzTarget.run(Array(data))
                replayed += 1
            }
        }
        print("replayed \(replayed) Signal inputs: no invariant violated")
    }
}
#endif
