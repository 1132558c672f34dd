import Foundation

/// Locates the JSON vector files committed under `Tests/InvisoCryptoTests/Resources/`.
enum TestResources {
    /// The bundled copy of `<name>.json`, or the source tree's copy when no bundle has it.
    static func url(named name: String) throws -> URL {
        if let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Resources") {
            return url
        }
        if let url = Bundle.module.url(forResource: name, withExtension: "json") {
            return url
        }
        let sourceCopy = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // Support
            .deletingLastPathComponent()  // InvisoCryptoTests
            .appendingPathComponent("Resources")
            .appendingPathComponent("\(name).json")
        guard FileManager.default.fileExists(atPath: sourceCopy.path) else {
            throw Missing(name: name, path: sourceCopy.path)
        }
        return sourceCopy
    }

    /// Decodes `<name>.json` as `T`.
    static func load<T: Decodable>(_: T.Type, named name: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(contentsOf: try url(named: name)))
    }

    struct Missing: Error, CustomStringConvertible {
        let name: String
        let path: String
        var description: String { "\(name).json not found in the test bundle nor at \(path)" }
    }
}
