package import Foundation

/// The `inviso` executable the CLI tests launch.
package enum InvisoExecutable {
    /// Finds the `inviso` executable: `INVISO_BINARY`, else next to the test bundle, else in
    /// this package's `.build/debug` or `.build/release`.
    package static func locate() throws -> URL {
        let fileManager = FileManager.default
        if let override = ProcessInfo.processInfo.environment["INVISO_BINARY"] {
            guard fileManager.isExecutableFile(atPath: override) else {
                throw BinaryNotFound(message: "INVISO_BINARY=\(override) is not an executable")
            }
            return URL(fileURLWithPath: override)
        }
        var directories: [URL] = []
        directories.append(Bundle.main.bundleURL)
        directories.append(Bundle.main.bundleURL.deletingLastPathComponent())
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            directories.append(bundle.bundleURL.deletingLastPathComponent())
        }
        if let argument = CommandLine.arguments.first {
            directories.append(URL(fileURLWithPath: argument).deletingLastPathComponent())
        }
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        directories.append(packageRoot.appendingPathComponent(".build/debug"))
        directories.append(packageRoot.appendingPathComponent(".build/release"))
        for directory in directories {
            let candidate = directory.appendingPathComponent("inviso")
            var isDirectory: ObjCBool = false
            if fileManager.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue,
               fileManager.isExecutableFile(atPath: candidate.path) {
                return candidate
            }
        }
        throw BinaryNotFound(message: """
            the inviso executable was not found (looked in \(directories.map(\.path).joined(separator: ", "))); \
            run `swift build` first or set INVISO_BINARY
            """)
    }

    /// The executable was not found.
    package struct BinaryNotFound: Error, CustomStringConvertible {
        package var message: String
        package var description: String { message }
    }
}
