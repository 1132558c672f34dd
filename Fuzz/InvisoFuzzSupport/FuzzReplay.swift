internal import Foundation

/// The non-fuzzing front end every fuzz target shares: replays files and corpus directories
/// through the target's entry function, or writes its seed corpus.
package enum FuzzReplay {
    /// Runs the replay tool and exits: 0 when every input replayed without a violated
    /// invariant (a violation traps), 2 on a usage or file error.
    /// - Parameters:
    ///   - tool: the executable's name, for the usage text.
    ///   - arguments: the command-line arguments after the executable.
    ///   - seeds: the target's seed corpus, each with a file name suffix.
    ///   - run: the target's entry function.
    package static func main(
        tool: String, arguments: [String], seeds: () -> [(name: String, bytes: [UInt8])], run: ([UInt8]) -> Void
    ) -> Never {
        let usage = """
            usage: \(tool) FILE|DIR...       replay inputs (a crash file, a corpus directory)
                   \(tool) --write-seeds DIR  write the seed corpus
            Arguments starting with '-' are libFuzzer options and are ignored here.
            """
        if arguments.first == "--write-seeds" {
            guard arguments.count == 2 else { fail(usage) }
            let count = write(seeds(), to: arguments[1])
            print("wrote \(count) seed inputs to \(arguments[1])")
            exit(0)
        }
        let paths = arguments.filter { !$0.hasPrefix("-") }
        guard !paths.isEmpty else { fail(usage) }
        var replayed = 0
        for path in paths {
            for file in files(at: path) {
                guard let data = FileManager.default.contents(atPath: file) else { fail("cannot read \(file)") }
                print("replaying \(file) (\(data.count) bytes)")
                run(Array(data))
                replayed += 1
            }
        }
        print("replayed \(replayed) inputs: no invariant violated")
        exit(0)
    }

    /// ``main(tool:arguments:seeds:run:)`` for this process's arguments, with seeds named
    /// by their position (`000`, `001`, …).
    package static func main(tool: String, seeds: [[UInt8]], run: ([UInt8]) -> Void) -> Never {
        main(
            tool: tool, arguments: Array(CommandLine.arguments.dropFirst()),
            seeds: { seeds.enumerated().map { (String(format: "%03d", $0.offset), $0.element) } }, run: run)
    }

    /// A libFuzzer input as an array (libFuzzer may pass no pointer for an empty input).
    package static func bytes(_ data: UnsafePointer<UInt8>?, _ count: Int) -> [UInt8] {
        data.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    }

    /// Writes every seed to `directory` as `seed-<name>` (created if needed); returns how many.
    static func write(_ seeds: [(name: String, bytes: [UInt8])], to directory: String) -> Int {
        let url = URL(fileURLWithPath: directory, isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            for seed in seeds {
                try Data(seed.bytes).write(to: url.appendingPathComponent("seed-\(seed.name)"))
            }
            return seeds.count
        } catch {
            fail("cannot write seeds to \(directory): \(error)")
        }
    }

    /// `path` itself, or the regular files directly inside it when it is a directory, sorted.
    static func files(at path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { fail("no such file: \(path)") }
        guard isDirectory.boolValue else { return [path] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.sorted().map { "\(path)/\($0)" }.filter { file in
            var nested: ObjCBool = false
            return FileManager.default.fileExists(atPath: file, isDirectory: &nested) && !nested.boolValue
        }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(2)
    }
}
