import Crypto
import Foundation

/// The key file of ``MasterKeySource/keyFile``: exactly 32 random bytes, mode 0600.
enum KeyFile {
    static let size = 32

    /// The key in `url`, or `nil` when there is no such file.
    ///
    /// - Throws: ``StoreError/Code/insecureKeyFile`` when the group or others have any access
    ///   to it; ``StoreError/Code/invalidKeyFile`` when it is unreadable or not 32 bytes.
    static func load(_ url: URL) throws(StoreError) -> SymmetricKey? {
        guard let mode = try StoreFiles.permissions(of: url) else { return nil }
        guard mode & 0o077 == 0 else { throw StoreError(.insecureKeyFile, "the key file's mode must be 0600") }
        guard var data = try? Data(contentsOf: url) else { throw StoreError(.invalidKeyFile, "reading the key file") }
        defer { data.resetBytes(in: 0..<data.count) }
        guard data.count == size else { throw StoreError(.invalidKeyFile, "the key file must hold 32 bytes") }
        return SymmetricKey(data: data)
    }

    /// Creates `url` holding a fresh random key. The file is created empty without
    /// overwriting anything, restricted to mode 0600, and only then written, so the key is
    /// never in a file others could read.
    ///
    /// - Throws: ``StoreError/Code/fileSystem`` when the file exists or cannot be written.
    static func create(_ url: URL) throws(StoreError) -> SymmetricKey {
        let key = SymmetricKey(size: .bits256)
        do {
            try Data().write(to: url, options: .withoutOverwriting)
        } catch {
            throw StoreError(.fileSystem, "creating the key file")
        }
        try StoreFiles.restrict(url)
        do {
            let handle = try FileHandle(forWritingTo: url)
            defer { try? handle.close() }
            try key.withUnsafeBytes { try handle.write(contentsOf: $0) }
            try handle.synchronize()
        } catch {
            throw StoreError(.fileSystem, "writing the key file")
        }
        return key
    }
}
