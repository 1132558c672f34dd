import Foundation

/// The files a store keeps in its directory, and the file-system steps around them.
enum StoreFiles {
    /// The SQLite database.
    static let database = "inviso.sqlite"
    /// The key file of ``MasterKeySource/keyFile``.
    static let key = "store.key"
    /// Every file the store may leave in its directory (SQLite's journal, WAL and shared
    /// memory files included), which ``erase(directory:)`` removes.
    static let all = [database, database + "-journal", database + "-wal", database + "-shm", key]

    /// Creates `directory` (mode 0700) when missing; an existing directory is left as it is.
    static func prepare(directory: URL) throws(StoreError) {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw StoreError(.fileSystem, "the store's path is not a directory") }
            return
        }
        do {
            try manager.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw StoreError(.fileSystem, "creating the store's directory")
        }
    }

    /// Sets `url`'s mode to 0600.
    static func restrict(_ url: URL) throws(StoreError) {
        do {
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        } catch {
            throw StoreError(.fileSystem, "setting a store file's mode to 0600")
        }
    }

    /// The file's permission bits, or `nil` when it does not exist.
    static func permissions(of url: URL) throws(StoreError) -> Int? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            if let number = attributes[.posixPermissions] as? NSNumber { return number.intValue & 0o7777 }
            if let value = attributes[.posixPermissions] as? Int { return value & 0o7777 }
            throw StoreError(.fileSystem, "reading a store file's mode")
        } catch {
            throw StoreError(.fileSystem, "reading a store file's mode")
        }
    }

    /// Removes every file of ``all`` from `directory`; the key file is overwritten with zeros
    /// first (a best effort: journaling and flash storage may keep old blocks). The directory
    /// itself stays. Missing files are skipped.
    static func erase(directory: URL) throws(StoreError) {
        let manager = FileManager.default
        for name in all {
            let url = directory.appendingPathComponent(name)
            guard manager.fileExists(atPath: url.path) else { continue }
            if name == key { overwriteWithZeros(url) }
            do {
                try manager.removeItem(at: url)
            } catch {
                throw StoreError(.fileSystem, "removing a store file")
            }
        }
    }

    private static func overwriteWithZeros(_ url: URL) {
        guard let handle = try? FileHandle(forUpdating: url) else { return }
        defer { try? handle.close() }
        guard let size = try? handle.seekToEnd(), size > 0, (try? handle.seek(toOffset: 0)) != nil else { return }
        try? handle.write(contentsOf: Data(count: Int(size)))
        try? handle.synchronize()
    }
}
