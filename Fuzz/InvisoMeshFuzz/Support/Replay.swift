internal import Foundation

/// The non-fuzzing front end: replays inputs through ``MeshFuzzTarget/run(_:)``.
enum Replay {
    static let usage = """
        usage: InvisoMeshFuzz FILE|DIR...       replay inputs (a crash file, a corpus directory)
               InvisoMeshFuzz --write-seeds DIR  write the seed corpus
        Arguments starting with '-' are libFuzzer options and are ignored here.
        """

    static func main(_ arguments: [String]) -> Never {
        if arguments.first == "--write-seeds" {
            guard arguments.count == 2 else { fail(usage) }
            let count = SeedCorpus.write(to: arguments[1])
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
                MeshFuzzTarget.run(Array(data))
                replayed += 1
            }
        }
        print("replayed \(replayed) inputs: no invariant violated")
        exit(0)
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
