import ArgumentParser
import Foundation
import InvisoOffline
import InvisoStore

/// `inviso erase-all`: deletes everything Inviso keeps in a data directory, keys included.
struct EraseAllCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "erase-all",
        abstract: "Delete every session, message and key Inviso keeps in the data directory.",
        discussion: """
            Removes the encrypted store (database and its key file), the offline account's \
            store (offline/), the nearby chat's store (nearby/) and the mesh node's identity, outbox and key. It needs no passphrase. Without --yes it lists what it \
            would delete and changes nothing.
            """
    )

    @Option(help: "Data directory (default: the per-user Inviso data directory).")
    var data: String?

    @Flag(help: "Really delete.")
    var yes = false

    func run() throws {
        let directory = DataDirectory.url(data)
        let meshFiles = [MeshStateFile.keyFile, MeshStateFile.identityFile, MeshStateFile.outboxFile]
        let offline = directory.appendingPathComponent(OfflineStore.directoryName)
        let nearby = directory.appendingPathComponent(NearbyCommand.directoryName)
        var present = (InvisoStore.fileNames + meshFiles).filter {
            FileManager.default.fileExists(atPath: directory.appendingPathComponent($0).path)
        }
        for (folder, name) in [(offline, OfflineStore.directoryName), (nearby, NearbyCommand.directoryName)] {
            present += InvisoStore.fileNames.filter {
                FileManager.default.fileExists(atPath: folder.appendingPathComponent($0).path)
            }.map { "\(name)/\($0)" }
        }
        guard yes else {
            if present.isEmpty {
                print("nothing to erase in \(directory.path)")
            } else {
                print("would delete from \(directory.path): \(present.joined(separator: ", "))")
                print("run again with --yes to delete them")
            }
            return
        }
        do {
            try InvisoStore.eraseAll(in: directory)
            if FileManager.default.fileExists(atPath: offline.path) { try InvisoStore.eraseAll(in: offline) }
            if FileManager.default.fileExists(atPath: nearby.path) { try InvisoStore.eraseAll(in: nearby) }
            for name in meshFiles {
                let url = directory.appendingPathComponent(name)
                if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
            }
        } catch {
            throw CLIError("could not erase everything in \(directory.path): \(error)")
        }
        print("erased \(present.count) file(s) in \(directory.path)")
    }
}
