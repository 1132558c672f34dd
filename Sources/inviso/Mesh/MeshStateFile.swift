import Crypto
import Foundation
import InvisoMesh
import InvisoNoise

/// What `inviso mesh` keeps in its data directory, sealed at rest:
///
/// - `mesh.key`: 32 random bytes, mode 0600, created on first use. It seals the two files
///   below with AES-256-GCM; the file name is the associated data, so one file's
///   ciphertext cannot be passed off as the other.
/// - `mesh-identity.sealed`: version 1 ‖ Noise static private key ‖ Ed25519 private key.
/// - `mesh-outbox.sealed`: the private messages not yet acknowledged (JSON of
///   ``PrivateOutbox/Entry``), rewritten whenever the outbox changes.
///
/// The chat client's encrypted store (issue 6) will take over the key (passphrase or
/// Keychain); until then the key file protects the state as well as the directory's
/// permissions do, and moving the sealed files without the key reveals nothing.
struct MeshStateFile {
    static let keyFile = "mesh.key"
    static let identityFile = "mesh-identity.sealed"
    static let outboxFile = "mesh-outbox.sealed"

    let directory: URL
    private let key: SymmetricKey

    /// Opens the state in `directory`, creating the directory (0700) and key as needed.
    init(directory: String) throws {
        self.directory = URL(fileURLWithPath: directory)
        let manager = FileManager.default
        try manager.createDirectory(at: self.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let keyURL = self.directory.appendingPathComponent(Self.keyFile)
        if let data = try? Data(contentsOf: keyURL) {
            guard data.count == 32 else { throw CLIError("\(keyURL.path) is not a mesh key") }
            key = SymmetricKey(data: data)
        } else {
            let fresh = SymmetricKey(size: .bits256)
            try AtomicFile.write(fresh.withUnsafeBytes { Data($0) }, to: keyURL)
            key = fresh
        }
    }

    /// The node's identity, created and saved on first use.
    func loadOrCreateIdentity() throws -> MeshIdentity {
        if let plaintext = try open(Self.identityFile) {
            guard plaintext.count == 65, plaintext[0] == 1,
                let noise = try? NoiseKeyPair(rawPrivateKey: plaintext[1..<33]),
                let signing = try? Curve25519.Signing.PrivateKey(rawRepresentation: plaintext[33..<65])
            else { throw CLIError("the mesh identity in \(directory.path) is damaged") }
            return MeshIdentity(noiseKey: noise, signingKey: signing)
        }
        let identity = MeshIdentity.generate()
        var plaintext = Data([1])
        identity.noiseKey.privateKey.rawRepresentation.withUnsafeBytes { plaintext.append(contentsOf: $0) }
        identity.signingKey.rawRepresentation.withUnsafeBytes { plaintext.append(contentsOf: $0) }
        try seal(plaintext, as: Self.identityFile)
        return identity
    }

    /// The saved outbox (empty when none was saved).
    func loadOutbox() throws -> [PrivateOutbox.Entry] {
        guard let plaintext = try open(Self.outboxFile) else { return [] }
        guard let entries = try? JSONDecoder().decode([PrivateOutbox.Entry].self, from: plaintext) else {
            throw CLIError("the mesh outbox in \(directory.path) is damaged")
        }
        return entries
    }

    /// Replaces the saved outbox.
    func saveOutbox(_ entries: [PrivateOutbox.Entry]) throws {
        try seal(try JSONEncoder().encode(entries), as: Self.outboxFile)
    }

    private func seal(_ plaintext: Data, as name: String) throws {
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: Data(name.utf8))
        guard let combined = box.combined else { throw CLIError("cannot seal \(name)") }
        try AtomicFile.write(combined, to: directory.appendingPathComponent(name))
    }

    /// The plaintext of `name`, or `nil` when the file does not exist.
    private func open(_ name: String) throws -> Data? {
        guard let sealed = try? Data(contentsOf: directory.appendingPathComponent(name)) else { return nil }
        do {
            return try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: key, authenticating: Data(name.utf8))
        } catch {
            throw CLIError("\(name) in \(directory.path) cannot be opened (damaged, or sealed under another key)")
        }
    }
}
