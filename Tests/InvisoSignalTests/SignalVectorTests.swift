import Foundation
import InvisoCrypto
import InvisoTesting
@testable import InvisoSignal
import Testing

/// libsignal's vectors and constants (shared/vectors/signal; libsignal commit
/// b056faa6dd02961cff24064c54c089c52e1a0753, see the files' `source` fields).
@Suite("libsignal vectors and constants")
struct SignalVectorTests {
    static func load(_ name: String) throws -> [String: Any]? {
        guard let url = SharedVectors.url("signal/\(name)") else {
            if SharedVectors.isCI { Issue.record("shared/vectors/signal/\(name) is missing under CI=true") }
            print(SharedVectors.skipMessage("libsignal \(name)"))
            return nil
        }
        return try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
    }

    @Test("chain-key.json: chain step and message keys", .enabled(if: SharedVectors.present("signal/chain-key.json"), SharedVectors.skipComment))
    func chainKey() throws {
        guard let root = try Self.load("chain-key.json") else { return }
        let vectors = try #require(root["vectors"] as? [[String: Any]])
        var ran = 0
        for vector in vectors {
            let inputs = try #require(vector["inputs"] as? [String: Any])
            let expected = try #require(vector["expected"] as? [String: Any])
            let derived = try #require(vector["derived_not_in_source"] as? [String: Any])
            func hex(_ dictionary: [String: Any], _ key: String) throws -> [UInt8] {
                try #require((dictionary[key] as? String).flatMap { [UInt8](hex: $0) })
            }
            let chain = ChainKey(key: SecretBytes(try hex(inputs, "chain_key")), index: UInt32(inputs["index"] as? Int ?? -1))
            let keys = chain.messageKeys
            #expect(keys.cipherKey == SecretBytes(try hex(expected, "cipher_key")))
            #expect(keys.macKey == SecretBytes(try hex(expected, "mac_key")))
            #expect(keys.iv == SecretBytes(try hex(derived, "iv")))
            #expect(chain.messageKeySeed == SecretBytes(try hex(derived, "message_key_seed")))
            #expect(keys.counter == UInt32(expected["message_keys_counter"] as? Int ?? -1))
            let next = chain.next
            #expect(next.key == SecretBytes(try hex(expected, "next_chain_key")))
            #expect(next.index == UInt32(expected["next_chain_key_index"] as? Int ?? -1))
            ran += 1
        }
        print("libsignal chain-key vectors: \(ran) ran")
        #expect(ran == 1)
    }

    /// Every constant we implement is compared with constants.json; the ones that belong
    /// to features outside this library (sealed sender, PNI signatures, …) are listed.
    @Test("constants.json: info strings, versions, key types, sizes and limits", .enabled(if: SharedVectors.present("signal/constants.json"), SharedVectors.skipComment))
    func constants() throws {
        guard let root = try Self.load("constants.json") else { return }
        let constants = try #require(root["constants"] as? [[String: Any]])
        func bytes(_ value: Any?) -> [UInt8]? {
            guard let value = value as? [String: Any] else { return nil }
            if let hex = value["hex"] as? String { return [UInt8](hex: hex) }
            return (value["string"] as? String).map { Array($0.utf8) }
        }
        func int(_ value: Any?) -> Int? {
            if let value = value as? Int { return value }
            return (value as? [String: Any])?["value"] as? Int
        }
        let notApplicable: Set<String> = [
            "XEDDSA_HASH1_PREFIX",  // covered by the XEdDSA tests in InvisoCryptoTests
            "SEALED_SENDER_V1_SALT_PREFIX", "SEALED_SENDER_V2_LABEL_R", "SEALED_SENDER_V2_LABEL_K",
            "SEALED_SENDER_V2_LABEL_DH", "SEALED_SENDER_V2_LABEL_DH_S", "ALTERNATE_IDENTITY_SIGNATURE_PREFIX",
            "SEALED_SENDER_V1_FULL_VERSION", "SEALED_SENDER_V2_UUID_FULL_VERSION",
            "SEALED_SENDER_V2_SERVICE_ID_FULL_VERSION", "PLAINTEXT_CONTEXT_IDENTIFIER_BYTE",
            "PLAINTEXT_PADDING_BOUNDARY_BYTE", "SPQR_MIN_VERSION", "Kyber768", "MLKEM1024", "ServiceIdKind",
            "addresses field", "MAX_UNACKNOWLEDGED_SESSION_AGE", "VALID_REGISTRATION_ID_MASK",
        ]
        var checked = 0
        var skipped: [String] = []
        for constant in constants {
            let name = try #require(constant["name"] as? String)
            let value = constant["value"]
            switch name {
            case "PQXDH_KDF_INFO": #expect(bytes(value) == RatchetConstants.pqxdhInfo)
            case "PQXDH_DISCONTINUITY_BYTES": #expect(bytes(value) == [UInt8](repeating: 0xff, count: 32))
            case "ROOT_KDF_INFO": #expect(bytes(value) == RatchetConstants.rootInfo)
            case "MESSAGE_KEYS_INFO": #expect(bytes(value) == RatchetConstants.messageKeysInfo)
            case "CHAIN_MESSAGE_KEY_SEED", "CHAIN_KEY_SEED":
                // Checked through the chain-key vector: seed byte 0x01, next-chain byte 0x02.
                #expect(bytes(value) == (name == "CHAIN_MESSAGE_KEY_SEED" ? [0x01] : [0x02]))
            case "SENDER_KEY_INFO": #expect(bytes(value) == Array("WhisperGroup".utf8))
            case "FINGERPRINT_VERSION_PREFIX": #expect(bytes(value) == [0, 0])
            case "CIPHERTEXT_MESSAGE_CURRENT_VERSION": #expect(int(value) == Int(SignalMessage.currentVersion))
            case "CIPHERTEXT_MESSAGE_PRE_KYBER_VERSION": #expect(int(value) == 3)
            case "SENDERKEY_MESSAGE_CURRENT_VERSION": #expect(int(value) == 3)
            case "SIGNAL_MESSAGE_MAC_LENGTH": #expect(int(value) == SignalMessage.macByteCount)
            case "SENDER_KEY_MESSAGE_SIGNATURE_LENGTH": #expect(int(value) == XEdDSA.signatureByteCount)
            case "CiphertextMessageType.Whisper": #expect(int(value) == Int(CiphertextMessageType.whisper.rawValue))
            case "CiphertextMessageType.PreKey": #expect(int(value) == Int(CiphertextMessageType.preKey.rawValue))
            case "CiphertextMessageType.SenderKey": #expect(int(value) == Int(CiphertextMessageType.senderKey.rawValue))
            case "CiphertextMessageType.Plaintext": #expect(int(value) == Int(CiphertextMessageType.plaintext.rawValue))
            case "DJB (Curve25519)": #expect(bytes(value) == [ECPublicKey.typeByte])
            case "Kyber1024": #expect(bytes(value) == [KyberPublicKey.typeByte])
            case let size where size.hasPrefix("curve25519."):
                #expect(int(value) == (size.hasSuffix("SIGNATURE_LENGTH") ? 64 : 32))
            case "Kyber1024 raw sizes":
                let sizes = try #require(value as? [String: Int])
                #expect(sizes["public_key"] == Kyber1024.publicKeyByteCount)
                #expect(sizes["ciphertext"] == Kyber1024.ciphertextByteCount)
                #expect(sizes["shared_secret"] == Kyber1024.sharedSecretByteCount)
            case "MAX_FORWARD_JUMPS": #expect(int(value) == Int(RatchetConstants.maxForwardJumps))
            case "MAX_MESSAGE_KEYS": #expect(int(value) == RatchetConstants.maxMessageKeys)
            case "MAX_RECEIVER_CHAINS": #expect(int(value) == RatchetConstants.maxReceiverChains)
            case "ARCHIVED_STATES_MAX_LENGTH": #expect(int(value) == RatchetConstants.maxArchivedStates)
            case "MAX_SENDER_KEY_STATES": #expect(int(value) == 5)
            case "DeviceId range":
                let range = try #require(value as? [String: Int])
                #expect(range["min"] == 1 && range["max"] == 127)
                #expect((try? ProtocolAddress(parsing: "a.127")) != nil)
                #expect((try? ProtocolAddress(parsing: "a.128")) == nil)
                #expect((try? ProtocolAddress(parsing: "a.0")) == nil)
            case "Fingerprint iterations":
                let range = try #require(value as? [String: Int])
                #expect(range["min_exclusive"] == 1 && range["max_inclusive"] == 1_000_000)
            case "All-zero X25519 agreement rejected":
                let zero = try ECPublicKey(rawRepresentation: [UInt8](repeating: 0, count: 32))
                #expect(throws: SignalError.lowOrderPublicKey) { _ = try ECPrivateKey().agreement(with: zero) }
            default:
                guard notApplicable.contains(where: { name.hasPrefix($0) }) else {
                    Issue.record("constant \(name) is neither checked nor listed as not applicable")
                    continue
                }
                skipped.append(name)
                continue
            }
            checked += 1
        }
        print("libsignal constants: \(checked) checked, \(skipped.count) outside this library: \(skipped.joined(separator: ", "))")
        #expect(checked + skipped.count == constants.count)
        #expect(checked >= 30)
    }
}
