import Foundation

/// `Resources/offline-vectors.json` (written by `scripts/vectors/offline_vectors.py`): one
/// loader for every suite that runs a section of it.
enum OfflineVectorFile {
    private static let data: Data? = Bundle.module.url(forResource: "offline-vectors", withExtension: "json", subdirectory: "Resources")
        .flatMap { try? Data(contentsOf: $0) }

    /// The entries of one section (`vectors`, `deflate`, `encodings`); empty when the file or
    /// the section is missing, which the suites' count checks catch.
    static func section(_ name: String) -> [[String: Any]] {
        guard let data, let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return [] }
        return root[name] as? [[String: Any]] ?? []
    }
}
