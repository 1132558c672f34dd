import Foundation
import InvisoMesh
import InvisoTesting
import Testing

/// Runs every entry of `shared/vectors/bitchat/wire-golden.json` (byte facts from
/// permissionlesstech/bitchat-android ClientRewriteWireContractTest.kt@09b481f1 and the iOS
/// sources listed in that folder's README): the 14 golden vectors, the 2 related vectors and
/// the pinned mesh message identity. Fails when a vector is unknown, fails, or when fewer
/// than all of them ran.
@Suite("BitChat golden vectors")
struct GoldenVectorTests {
    static let expectedGolden = 14
    static let expectedRelated = 2

    /// The parsed file, or `nil` (after recording an issue under CI) when it is missing.
    static func load() throws -> [String: Any]? {
        guard let url = SharedVectors.url("bitchat/wire-golden.json") else {
            if SharedVectors.isCI { Issue.record("shared/vectors/bitchat/wire-golden.json is missing under CI=true") }
            print(SharedVectors.skipMessage("BitChat wire golden vectors"))
            return nil
        }
        return try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    @Test("every golden_vectors entry encodes and decodes byte for byte", .enabled(if: SharedVectors.present("bitchat/wire-golden.json"), SharedVectors.skipComment))
    func goldenVectors() throws {
        guard let root = try Self.load() else { return }
        let vectors = try #require(root["golden_vectors"] as? [[String: Any]])
        var ran = 0
        for vector in vectors {
            let name = try #require(vector["name"] as? String)
            if let fields = vector["fields"] as? [[String: Any]], let expected = vector["expected_hex"] as? String {
                let joined = fields.compactMap { $0["hex"] as? String }.joined()
                #expect(joined == expected, "\(name): fields do not concatenate to expected_hex")
            }
            guard let run = Self.runners[name] else {
                Issue.record("unknown golden vector \(name)")
                continue
            }
            try run(vector)
            ran += 1
        }
        print("BitChat golden vectors: \(ran) ran")
        #expect(ran == Self.expectedGolden, "expected \(Self.expectedGolden) golden vectors, ran \(ran)")
    }

    @Test("related vectors: capability bits and encodings, authenticated peer state", .enabled(if: SharedVectors.present("bitchat/wire-golden.json"), SharedVectors.skipComment))
    func relatedVectors() throws {
        guard let root = try Self.load() else { return }
        let vectors = try #require(root["related_vectors"] as? [[String: Any]])
        var ran = 0
        for vector in vectors {
            switch vector["name"] as? String {
            case "peer_capabilities_bits": try Self.peerCapabilities(vector)
            case "authenticated_peer_state": try Self.authenticatedPeerState(vector)
            default:
                Issue.record("unknown related vector \(vector["name"] ?? "?")")
                continue
            }
            ran += 1
        }
        print("BitChat related vectors: \(ran) ran")
        #expect(ran == Self.expectedRelated, "expected \(Self.expectedRelated) related vectors, ran \(ran)")
    }

    @Test("mesh message identity: pinned ID, derived IDs and the rules", .enabled(if: SharedVectors.present("bitchat/wire-golden.json"), SharedVectors.skipComment))
    func meshMessageIdentity() throws {
        guard let root = try Self.load() else { return }
        let vector = try #require(root["mesh_message_identity"] as? [String: Any])
        let inputs = try #require(vector["inputs"] as? [String: Any])
        let id = MeshMessageIdentity(
            senderIDHex: try #require(inputs["senderIDHex"] as? String),
            timestampMs: try Self.uint(inputs["timestampMs"]),
            content: try #require(inputs["content"] as? String))
        #expect(id.rawValue == vector["expected_id"] as? String)
        var ran = 1
        let derived = try #require((vector["derived_not_in_source"] as? [String: Any])?["examples"] as? [[String: Any]])
        for example in derived {
            let parts = try #require(example["hashed_string"] as? String).split(separator: "|", maxSplits: 2)
            let derivedID = MeshMessageIdentity(
                senderIDHex: String(parts[0]), timestampMs: try #require(UInt64(parts[1])), content: String(parts[2]))
            #expect(derivedID.rawValue == example["id"] as? String)
            ran += 1
        }
        // The rules, as stated in the vector.
        #expect(
            MeshMessageIdentity(senderIDHex: "AABBCCDD00112233", timestampMs: 1, content: "x")
                == MeshMessageIdentity(senderIDHex: "aabbccdd00112233", timestampMs: 1, content: "x"))
        #expect(
            MeshMessageIdentity(senderIDHex: "0011223344556677", timestampMs: 1_750_000_000_123, content: "  hello mesh \n")
                == id)
        #expect(MeshMessageIdentity(sender: PeerID(rawValue: 0x0011_2233_4455_6677), timestampMs: 1_750_000_000_123, content: "hello mesh") == id)
        #expect(MeshMessageIdentity.milliseconds(sinceEpochSeconds: 1000.9996) == 1_000_999)
        #expect(MeshMessageIdentity.milliseconds(sinceEpochSeconds: 1000) == 1_000_000)
        print("BitChat mesh message identity vectors: \(ran) ran")
        #expect(ran == 4)
    }

    // MARK: - Runners, one per golden vector name

    typealias Runner = @Sendable ([String: Any]) throws -> Void

    static let runners: [String: Runner] = [
        "packet_v1_public_message_unpadded": packet,
        "packet_v2_routed_signed_noise_encrypted": packet,
        "chat_message_minimal": chatMessage,
        "chat_message_all_optional_fields": chatMessage,
        "chat_message_encrypted_content": chatMessageEncrypted,
        "private_message_tlv": privateMessage,
        "noise_payload_private_message": noisePayload,
        "noise_payload_file_transfer_alias": noisePayloadAlias,
        "fragment_payload_header": fragment,
        "request_sync_tlv": requestSync,
        "identity_announcement_tlv": identityAnnouncement,
        "file_transfer_tlv": fileTransfer,
        "chat_message_truncation_rejected": chatTruncation,
        "tlv_decoders_reject_malformed": malformed,
    ]

    static func packet(_ vector: [String: Any]) throws {
        let inputs = try #require(vector["inputs"] as? [String: Any])
        let expected = try hex(vector["expected_hex"])
        let packet = MeshPacket(
            version: UInt8(try uint(inputs["version"])), type: MessageType(rawValue: UInt8(try uint(inputs["type"]))),
            ttl: UInt8(try uint(inputs["ttl"])), timestamp: try uint(inputs["timestamp_ms"]),
            senderID: try peer(inputs["sender_id"]),
            recipientID: inputs["recipient_id"] is String ? try peer(inputs["recipient_id"]) : nil,
            route: try (inputs["route"] as? [String])?.map { try peer($0) },
            payload: try hex(inputs["payload"]),
            signature: inputs["signature"] is String ? try hex(inputs["signature"]) : nil)
        #expect(try packet.encoded() == expected, "\(vector["name"]!): encoding")
        #expect(try MeshPacket.decode(expected) == packet, "\(vector["name"]!): decoding")
        #expect(try MeshPacket.decode(try packet.encoded(padded: true)) == packet, "\(vector["name"]!): padded")
        for length in 0..<expected.count {
            #expect(throws: MeshWireError.self, "\(vector["name"]!): prefix \(length) decoded") {
                try MeshPacket.decode(expected.prefix(length))
            }
        }
    }

    static func chatMessage(_ vector: [String: Any]) throws {
        let inputs = try #require(vector["inputs"] as? [String: Any])
        let expected = try hex(vector["expected_hex"])
        let message = ChatMessage(
            id: try #require(inputs["id"] as? String), sender: try #require(inputs["sender"] as? String),
            content: try #require(inputs["content"] as? String), timestamp: try uint(inputs["timestamp_ms"]),
            isRelay: inputs["isRelay"] as? Bool ?? false, isPrivate: inputs["isPrivate"] as? Bool ?? false,
            originalSender: inputs["originalSender"] as? String, recipientNickname: inputs["recipientNickname"] as? String,
            senderPeerID: inputs["senderPeerID"] as? String, mentions: inputs["mentions"] as? [String] ?? [],
            channel: inputs["channel"] as? String)
        #expect(try message.encoded() == expected, "\(vector["name"]!): encoding")
        #expect(try ChatMessage(decoding: expected) == message, "\(vector["name"]!): decoding")
    }

    static func chatMessageEncrypted(_ vector: [String: Any]) throws {
        let inputs = try #require(vector["inputs"] as? [String: Any])
        let expected = try #require(vector["expected"] as? [String: Any])
        let ciphertext = try hex(inputs["encryptedContent"])
        let placeholder = try #require(inputs["content"] as? String)
        let message = ChatMessage(
            id: try #require(inputs["id"] as? String), sender: try #require(inputs["sender"] as? String),
            content: placeholder, timestamp: try uint(inputs["timestamp_ms"]), isPrivate: true,
            encryptedContent: ciphertext)
        let wire = try message.encoded()
        #expect(!wire.hex.contains(Array(placeholder.utf8).hex), "the placeholder plaintext is on the wire")
        let derived = try #require(vector["derived_not_in_source"] as? [String: Any])
        #expect(wire == (try hex(derived["expected_hex"])))
        let decoded = try ChatMessage(decoding: wire)
        #expect(decoded.content == expected["decoded_content"] as? String)
        #expect(decoded.encryptedContent == (try hex(expected["decoded_encryptedContent"])))
        #expect(decoded.isEncrypted == expected["isEncrypted"] as? Bool)
        #expect(decoded.isPrivate == expected["isPrivate"] as? Bool)
    }

    static func privateMessage(_ vector: [String: Any]) throws {
        let inputs = try #require(vector["inputs"] as? [String: Any])
        let expected = try hex(vector["expected_hex"])
        let message = PrivateMessagePacket(
            messageID: try #require(inputs["messageID"] as? String), content: try #require(inputs["content"] as? String))
        #expect(try message.encoded() == expected)
        #expect(try PrivateMessagePacket(decoding: expected) == message)
    }

    static func noisePayload(_ vector: [String: Any]) throws {
        let inputs = try #require(vector["inputs"] as? [String: Any])
        let expected = try hex(vector["expected_hex"])
        let payload = NoisePayload(type: NoisePayloadType(rawValue: UInt8(try uint(inputs["type"]))), data: try hex(inputs["data"]))
        #expect(payload.type == .privateMessage)
        #expect(payload.encoded() == expected)
        let decoded = try NoisePayload(decoding: expected)
        #expect(decoded == payload)
        #expect(try PrivateMessagePacket(decoding: decoded.data) == PrivateMessagePacket(messageID: "m1", content: "hi"))
    }

    static func noisePayloadAlias(_ vector: [String: Any]) throws {
        let inputs = try #require(vector["inputs"] as? [String: Any])
        let expected = try #require(vector["expected"] as? [String: Any])
        let decoded = try NoisePayload(decoding: try hex(inputs["decode_hex"]))
        #expect(decoded.type == .fileTransfer)
        #expect(decoded.data == (try hex(expected["decoded_data"])))
        #expect(decoded.encoded() == (try hex(expected["reencoded_hex"])))
    }

    static func fragment(_ vector: [String: Any]) throws {
        let inputs = try #require(vector["inputs"] as? [String: Any])
        let expected = try hex(vector["expected_hex"])
        #expect(vector["header_size"] as? Int == FragmentHeader.size)
        let payload = FragmentPayload(
            header: FragmentHeader(
                fragmentID: try peer(inputs["fragmentID"]).rawValue, index: UInt16(try uint(inputs["index"])),
                total: UInt16(try uint(inputs["total"])), originalType: MessageType(rawValue: UInt8(try uint(inputs["originalType"])))),
            chunk: try hex(inputs["data"]))
        #expect(payload.encoded() == expected)
        #expect(try FragmentPayload(decoding: expected) == payload)
        #expect(try FragmentHeader(decoding: expected.prefix(FragmentHeader.size)) == payload.header)
    }

    static func requestSync(_ vector: [String: Any]) throws {
        let inputs = try #require(vector["inputs"] as? [String: Any])
        let expected = try hex(vector["expected_hex"])
        let request = RequestSyncPacket(
            p: UInt8(try uint(inputs["p"])), m: UInt32(try uint(inputs["m"])), data: try hex(inputs["data"]))
        #expect(try request.encoded() == expected)
        #expect(try RequestSyncPacket(decoding: expected) == request)
        #expect(try RequestSyncPacket(decoding: try hex(vector["also_accepted_hex"])) == request)
    }

    static func identityAnnouncement(_ vector: [String: Any]) throws {
        let inputs = try #require(vector["inputs"] as? [String: Any])
        let expected = try hex(vector["expected_hex"])
        let capabilityText = try #require(inputs["capabilities"] as? String)
        let bit = try #require(capabilityText.split(separator: "bit ").last.flatMap { UInt64($0.dropLast()) })
        let unknown = try #require(inputs["unknownTLVs"] as? [[String: Any]]).map {
            IdentityAnnouncement.UnknownField(type: UInt8(try uint($0["type"])), value: try hex($0["value"]))
        }
        let announcement = IdentityAnnouncement(
            nickname: try #require(inputs["nickname"] as? String), noisePublicKey: try hex(inputs["noisePublicKey"]),
            signingPublicKey: try hex(inputs["signingPublicKey"]), capabilities: PeerCapabilities(rawValue: 1 << bit),
            unknownFields: unknown)
        #expect(announcement.capabilities == .privateMedia)
        #expect(try announcement.encoded() == expected)
        #expect(try IdentityAnnouncement(decoding: expected) == announcement)
    }

    static func fileTransfer(_ vector: [String: Any]) throws {
        let inputs = try #require(vector["inputs"] as? [String: Any])
        let expected = try hex(vector["expected_hex"])
        let file = FileTransferPacket(
            fileName: inputs["fileName"] as? String, fileSize: UInt32(try uint(inputs["fileSize"])),
            mimeType: inputs["mimeType"] as? String, content: try hex(inputs["content"]))
        #expect(try file.encoded() == expected)
        #expect(try FileTransferPacket(decoding: expected) == file)
    }

    static func chatTruncation(_ vector: [String: Any]) throws {
        let inputs = try #require(vector["inputs"] as? [String: Any])
        let full = try hex((vector["derived_not_in_source"] as? [String: Any])?["full_hex"])
        let message = ChatMessage(
            id: try #require(inputs["id"] as? String), sender: try #require(inputs["sender"] as? String),
            content: try #require(inputs["content"] as? String), timestamp: try uint(inputs["timestamp_ms"]))
        #expect(try message.encoded() == full)
        #expect(try ChatMessage(decoding: full) == message)
        for length in 0..<full.count {
            #expect(throws: MeshWireError.self, "prefix of \(length) bytes decoded") {
                try ChatMessage(decoding: full.prefix(length))
            }
        }
    }

    static func malformed(_ vector: [String: Any]) throws {
        let cases = try #require(vector["cases"] as? [[String: Any]])
        #expect(cases.count == 6)
        for item in cases {
            let bytes = try hex(item["hex"])
            let decoder = try #require(item["decoder"] as? String)
            let why = item["why"] as? String ?? ""
            #expect(throws: MeshWireError.self, "\(decoder) accepted \(item["hex"]!) (\(why))") {
                switch decoder {
                case "PrivateMessagePacket": _ = try PrivateMessagePacket(decoding: bytes)
                case "RequestSyncPacket": _ = try RequestSyncPacket(decoding: bytes)
                case "IdentityAnnouncement": _ = try IdentityAnnouncement(decoding: bytes)
                case "BitchatFilePacket": _ = try FileTransferPacket(decoding: bytes)
                case "FragmentPayload": _ = try FragmentPayload(decoding: bytes)
                default: Issue.record("unknown decoder \(decoder)")
                }
            }
        }
    }

    // MARK: - Related vectors

    static func peerCapabilities(_ vector: [String: Any]) throws {
        let bits = try #require(vector["bits"] as? [String: Int])
        let named: [String: PeerCapabilities] = [
            "prekeys": .prekeys, "wifiBulk": .wifiBulk, "gateway": .gateway, "groups": .groups, "board": .board,
            "vouch": .vouch, "meshDiagnostics": .meshDiagnostics, "bridge": .bridge, "privateMedia": .privateMedia,
            "privateMediaReceipts": .privateMediaReceipts,
            "nonDestructiveNoiseReplacement": .nonDestructiveNoiseReplacement,
        ]
        #expect(bits.count == named.count)
        for (name, bit) in bits {
            #expect(named[name]?.rawValue == 1 << UInt64(bit), "capability \(name)")
        }
        let encodings = try #require(vector["encodings"] as? [[String: Any]])
        for encoding in encodings {
            let value = try #require(encoding["value"] as? String)
            let expected = try hex(encoding["hex"])
            let capabilities: PeerCapabilities
            switch value {
            case "none": capabilities = []
            case "bits 0..10 all set": capabilities = PeerCapabilities(rawValue: 0x7FF)
            default:
                if value.hasPrefix("decode ") {
                    let input = try #require([UInt8](hex: String(value.split(separator: " ")[1])))
                    capabilities = PeerCapabilities(decoding: input)
                    #expect(capabilities == PeerCapabilities(rawValue: 1 | 1 << 63))
                } else {
                    capabilities = try #require(named[value], "unknown capability \(value)")
                }
            }
            #expect(capabilities.encoded() == expected, "\(value)")
            #expect(PeerCapabilities(decoding: expected) == capabilities)
            #expect(try PeerCapabilities(canonicalEncoding: expected) == capabilities)
        }
    }

    static func authenticatedPeerState(_ vector: [String: Any]) throws {
        let inputs = try #require(vector["inputs"] as? [String: Any])
        #expect(inputs["capabilities"] as? String == "privateMedia")
        let state = AuthenticatedPeerState(capabilities: .privateMedia, signingPublicKey: try hex(inputs["signingPublicKey"]))
        let expected = try hex(vector["expected_hex"])
        #expect(try state.encoded() == expected)
        #expect(try AuthenticatedPeerState(decoding: expected) == state)
        let example = try #require(vector["ios_prefix_example"] as? [String: Any])
        let iosState = AuthenticatedPeerState(
            capabilities: [.privateMedia, .vouch], signingPublicKey: try hex(example["signingPublicKey"]))
        let prefix = try hex(example["expected_prefix_hex"])
        #expect(try iosState.encoded().starts(with: prefix))
        #expect(NoisePayload(type: .authenticatedPeerState, data: expected).encoded().first == 0x21)
    }

    // MARK: - JSON helpers

    /// Bytes from a hex string.
    static func hex(_ value: Any?) throws -> [UInt8] {
        try #require((value as? String).flatMap { [UInt8](hex: $0) }, "missing or bad hex")
    }

    /// An integer given as a JSON number, decimal text, or "0x…" text optionally followed by
    /// words ("0x02 message").
    static func uint(_ value: Any?) throws -> UInt64 {
        if let number = value as? Int { return UInt64(number) }
        let text = try #require(value as? String, "missing integer")
        let token = String(text.split(separator: " ").first ?? "")
        if token.hasPrefix("0x") { return try #require(UInt64(token.dropFirst(2), radix: 16), "bad hex \(token)") }
        return try #require(UInt64(token), "bad integer \(token)")
    }

    static func peer(_ value: Any?) throws -> PeerID {
        try #require((value as? String).flatMap { PeerID(hex: $0) }, "bad peer ID")
    }
}
