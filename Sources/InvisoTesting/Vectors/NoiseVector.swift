package import Foundation

/// One Noise test vector in either schema of `shared/vectors/noise/README.md`.
package struct NoiseVector: Decodable, Sendable {
    /// A handshake or transport message of a vector.
    package struct Message: Decodable, Sendable {
        package let payload: String
        package let ciphertext: String
    }

    package let protocolName: String?
    package let name: String?
    package let pattern: String?
    package let fallback: Bool?
    package let initPrologue: String?
    package let respPrologue: String?
    package let initEphemeral: String?
    package let respEphemeral: String?
    package let initStatic: String?
    package let respStatic: String?
    package let initRemoteStatic: String?
    package let respRemoteStatic: String?
    package let initPsks: [String]?
    package let respPsks: [String]?
    package let initPsk: String?
    package let respPsk: String?
    package let handshakeHash: String?
    package let messages: [Message]

    enum CodingKeys: String, CodingKey {
        case protocolName = "protocol_name", name, pattern, fallback
        case initPrologue = "init_prologue", respPrologue = "resp_prologue"
        case initEphemeral = "init_ephemeral", respEphemeral = "resp_ephemeral"
        case initStatic = "init_static", respStatic = "resp_static"
        case initRemoteStatic = "init_remote_static", respRemoteStatic = "resp_remote_static"
        case initPsks = "init_psks", respPsks = "resp_psks", initPsk = "init_psk", respPsk = "resp_psk"
        case handshakeHash = "handshake_hash", messages
    }

    /// The protocol name from whichever schema field carries it.
    package var fullName: String { protocolName ?? name ?? "" }

    /// Loads every vector of a `{"vectors": [...]}` file.
    package static func load(_ url: URL) throws -> [NoiseVector] {
        struct File: Decodable { let vectors: [NoiseVector] }
        return try JSONDecoder().decode(File.self, from: Data(contentsOf: url)).vectors
    }
}
