import ArgumentParser
import Foundation
import InvisoCrypto
import InvisoSignal

/// `inviso signal`: the Signal protocol (X3DH/PQXDH + Double Ratchet), scriptable.
struct SignalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signal",
        abstract: "Signal protocol sessions, byte-compatible with libsignal (JSON in and out).",
        discussion: """
            State lives in the --store directory between invocations. Every command prints \
            one JSON object; failures print {"error":…} and exit non-zero without changing \
            the store.
            """,
        subcommands: [
            SignalInit.self, SignalBundle.self, SignalEncrypt.self, SignalDecrypt.self, SignalFingerprint.self,
        ]
    )
}

/// Options shared by every `inviso signal` command.
struct SignalStoreOption: ParsableArguments {
    @Option(name: .long, help: "The store directory.")
    var store: String
}

/// Runs `body`, printing its JSON result, or `{"error":…}` and exiting with status 1.
func runSignalCommand(_ body: () throws -> any Encodable) throws {
    do {
        let result = try body()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        JSONLines.emitLine(String(decoding: try encoder.encode(result), as: UTF8.self))
    } catch {
        JSONLines.emit(["error": .string(String(describing: error))])
        throw ExitCode.failure
    }
}

/// `inviso signal init`.
struct SignalInit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create a store: identity, registration id, signed pre-key, one-time and Kyber pre-keys."
    )

    @OptionGroup var options: SignalStoreOption

    @Option(name: .long, help: "Our name (default: the store directory's name).")
    var name: String?

    @Option(name: .customLong("device-id"), help: "Our device id, 1…127.")
    var deviceID: UInt32 = 1

    @Flag(name: .customLong("no-kyber"), help: "Publish no Kyber pre-keys (peers fall back to X3DH, version 3).")
    var noKyber = false

    struct Output: Encodable {
        let name: String
        let device_id: UInt32
        let registration_id: UInt32
        let identity_key: String
    }

    func run() throws {
        try runSignalCommand {
            guard (1...127).contains(deviceID) else { throw CLIError("--device-id must be 1…127") }
            let resolvedName = name ?? URL(fileURLWithPath: options.store).standardizedFileURL.lastPathComponent
            guard !resolvedName.isEmpty, !resolvedName.contains(".") || resolvedName.last != "." else {
                throw CLIError("invalid --name")
            }
            let file = try SignalStoreFile.create(
                directory: options.store, name: resolvedName, deviceID: deviceID, kyber: !noKyber)
            return Output(
                name: file.name, device_id: file.deviceID, registration_id: file.store.registrationID,
                identity_key: Data(file.store.identity.identityKey.serialized).base64EncodedString())
        }
    }
}

/// The JSON form of a pre-key bundle (keys and signatures base64, libsignal's bytes).
struct BundleJSON: Codable {
    struct SignedKey: Codable {
        let id: UInt32
        let `public`: String
        let signature: String
    }

    struct Key: Codable {
        let id: UInt32
        let `public`: String
    }

    let registration_id: UInt32
    let device_id: UInt32
    let identity_key: String
    let signed_pre_key: SignedKey
    let pre_key: Key?
    let kyber_pre_key: SignedKey?

    init(_ bundle: PreKeyBundle) {
        registration_id = bundle.registrationID
        device_id = bundle.deviceID
        identity_key = Data(bundle.identityKey.serialized).base64EncodedString()
        signed_pre_key = SignedKey(
            id: bundle.signedPreKeyID, public: Data(bundle.signedPreKey.serialized).base64EncodedString(),
            signature: Data(bundle.signedPreKeySignature).base64EncodedString())
        pre_key = bundle.preKey.map { Key(id: $0.id, public: Data($0.publicKey.serialized).base64EncodedString()) }
        kyber_pre_key = bundle.kyberPreKey.map {
            SignedKey(
                id: $0.id, public: Data($0.publicKey.serialized).base64EncodedString(),
                signature: Data($0.signature).base64EncodedString())
        }
    }

    // Encode absent keys as explicit nulls, as documented.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(registration_id, forKey: .registration_id)
        try container.encode(device_id, forKey: .device_id)
        try container.encode(identity_key, forKey: .identity_key)
        try container.encode(signed_pre_key, forKey: .signed_pre_key)
        try container.encode(pre_key, forKey: .pre_key)
        try container.encode(kyber_pre_key, forKey: .kyber_pre_key)
    }

    func bundle() throws -> PreKeyBundle {
        func bytes(_ text: String, _ field: String) throws -> [UInt8] {
            guard let data = Data(base64Encoded: text) else { throw CLIError("bundle: \(field) is not base64") }
            return Array(data)
        }
        return PreKeyBundle(
            registrationID: registration_id, deviceID: device_id,
            preKey: try pre_key.map { ($0.id, try ECPublicKey(serialized: try bytes($0.public, "pre_key.public"))) },
            signedPreKeyID: signed_pre_key.id,
            signedPreKey: try ECPublicKey(serialized: try bytes(signed_pre_key.public, "signed_pre_key.public")),
            signedPreKeySignature: try bytes(signed_pre_key.signature, "signed_pre_key.signature"),
            identityKey: try IdentityKey(serialized: try bytes(identity_key, "identity_key")),
            kyberPreKey: try kyber_pre_key.map {
                (
                    $0.id, try KyberPublicKey(serialized: try bytes($0.public, "kyber_pre_key.public")),
                    try bytes($0.signature, "kyber_pre_key.signature")
                )
            })
    }
}

/// `inviso signal bundle`.
struct SignalBundle: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bundle",
        abstract: "Print our pre-key bundle as JSON (give it to a peer for `encrypt --bundle`)."
    )

    @OptionGroup var options: SignalStoreOption

    func run() throws {
        try runSignalCommand {
            BundleJSON(try SignalStoreFile.load(directory: options.store).bundle())
        }
    }
}

/// `inviso signal encrypt`.
struct SignalEncrypt: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encrypt",
        abstract: "Encrypt TEXT for NAME.DEVICE; prints {\"type\":2|3,\"body\":base64}."
    )

    @OptionGroup var options: SignalStoreOption

    @Option(name: .long, help: "The recipient, NAME.DEVICE.")
    var to: String

    @Option(name: .long, help: "A bundle JSON file (from `inviso signal bundle`) to start a new session with.")
    var bundle: String?

    @Argument(help: "The message.")
    var text: String

    struct Output: Encodable {
        let type: UInt8
        let body: String
    }

    func run() throws {
        try runSignalCommand {
            var file = try SignalStoreFile.load(directory: options.store)
            let address = try ProtocolAddress(parsing: to)
            if let bundle {
                guard let data = FileManager.default.contents(atPath: bundle) else {
                    throw CLIError("cannot read \(bundle)")
                }
                let parsed: BundleJSON
                do {
                    parsed = try JSONDecoder().decode(BundleJSON.self, from: data)
                } catch {
                    throw CLIError("\(bundle) is not a bundle JSON file")
                }
                try SessionBuilder.process(try parsed.bundle(), for: address, store: &file.store)
            }
            let message = try SessionCipher.encrypt(Array(text.utf8), for: address, store: &file.store)
            try file.save()
            return Output(type: message.type.rawValue, body: Data(message.serialized).base64EncodedString())
        }
    }
}

/// `inviso signal decrypt`.
struct SignalDecrypt: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decrypt",
        abstract: "Decrypt a message from NAME.DEVICE; prints {\"plaintext\":…}."
    )

    @OptionGroup var options: SignalStoreOption

    @Option(name: .long, help: "The sender, NAME.DEVICE.")
    var from: String

    @Option(name: .long, help: "The message type: 2 (SignalMessage) or 3 (PreKeySignalMessage).")
    var type: UInt8

    @Argument(help: "The message body, base64.")
    var body: String

    struct Output: Encodable {
        let plaintext: String
    }

    func run() throws {
        try runSignalCommand {
            var file = try SignalStoreFile.load(directory: options.store)
            let address = try ProtocolAddress(parsing: from)
            guard type == 2 || type == 3, let messageType = CiphertextMessageType(rawValue: type) else {
                throw CLIError("--type must be 2 or 3")
            }
            guard let bytes = Data(base64Encoded: body) else { throw CLIError("BODY is not base64") }
            let plaintext = try SessionCipher.decrypt(
                type: messageType, body: Array(bytes), from: address, store: &file.store)
            guard let text = String(validating: plaintext, as: UTF8.self) else {
                throw CLIError("the plaintext is not UTF-8")
            }
            try file.save()
            return Output(plaintext: text)
        }
    }
}

/// `inviso signal fingerprint`.
struct SignalFingerprint: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fingerprint",
        abstract: "Print the safety number with NAME.DEVICE (60 digits) and its scannable form.",
        discussion: """
            Stable ids are the UTF-8 names (ours and the peer's); 5,200 iterations, as \
            libsignal's clients use. Both sides print the same 60 digits.
            """
    )

    @OptionGroup var options: SignalStoreOption

    @Option(name: .long, help: "The peer, NAME.DEVICE.")
    var peer: String

    @Option(name: .long, help: "Safety-number version: 1 or 2.")
    var version: UInt32 = 2

    struct Output: Encodable {
        let fingerprint: String
        let scannable: String
    }

    func run() throws {
        try runSignalCommand {
            let file = try SignalStoreFile.load(directory: options.store)
            let address = try ProtocolAddress(parsing: peer)
            guard version == 1 || version == 2 else { throw CLIError("--version must be 1 or 2") }
            guard let remote = try file.store.identity(for: address) else {
                throw CLIError("no identity known for \(address) (exchange a message first)")
            }
            let fingerprint = try Fingerprint(
                version: version, iterations: 5200, localStableID: Array(file.name.utf8),
                localIdentity: file.store.identity.identityKey, remoteStableID: Array(address.name.utf8),
                remoteIdentity: remote)
            return Output(
                fingerprint: fingerprint.displayable.digits,
                scannable: Data(fingerprint.scannable.serialized).base64EncodedString())
        }
    }
}
