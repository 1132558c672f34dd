import Crypto
import InvisoCrypto
import InvisoNoise
import InvisoSignal

/// The constants and derivations of Inviso v2 pairing (`docs/protocol.md`, "v2"):
///
/// ```
/// CPace (X25519, SHA-512): PRS = words joined by "-", CI = "inviso v2", sid = room id,
///                          AD empty, creator = initiator
/// psk      = HKDF-SHA256(IKM = ISK (64), salt = room id, info = "inviso v2 psk", 32)
/// prologue = "inviso v2" ‖ 0x00 ‖ room id ‖ 0x00 ‖ CPace sid_output (64)
/// Noise_XXpsk3_25519_ChaChaPoly_SHA256, creator = initiator
/// RK ‖ CK  = HKDF-SHA256(IKM = k1 ‖ k2, salt = h, info = "inviso v2 ratchet", 64)
/// ```
///
/// where `k1`, `k2` are the keys of Noise's `Split()` (initiator→responder first) and `h`
/// the final handshake hash.
enum V2KeySchedule {
    /// CPace's channel identifier, and the prologue's first field.
    static let label = Array("inviso v2".utf8)
    /// HKDF info of the Noise psk.
    static let pskInfo = Array("inviso v2 psk".utf8)
    /// HKDF info of the ratchet seed.
    static let ratchetInfo = Array("inviso v2 ratchet".utf8)
    /// The Noise protocol.
    static let noiseProtocolName = "Noise_XXpsk3_25519_ChaChaPoly_SHA256"
    /// The parsed Noise protocol; the name is a constant the library supports.
    static let noiseProtocol: NoiseProtocol = {
        do {
            return try NoiseProtocol(noiseProtocolName)
        } catch {
            preconditionFailure("InvisoNoise does not parse \(noiseProtocolName)")
        }
    }()
    /// The lengths of the three `XXpsk3` messages with Inviso's payloads: msg1 `e` and an
    /// empty payload (the psk modifier turns on encryption from the first `e`, so it has a
    /// tag), msg2 `e, ee, s, es` and the 33-byte ratchet key, msg3 `s, se, psk` and an
    /// empty payload.
    static let handshakeMessageLengths = [32 + 16, 32 + (32 + 16) + (33 + 16), (32 + 16) + 16]
    /// The length of a CPace frame body, `0x20 ‖ Y ‖ 0x00`.
    static let cpaceMessageLength = 1 + CPace.shareByteCount + 1

    /// The Noise psk from CPace's intermediate session key.
    static func preSharedKey(isk: SecretBytes, roomID: [UInt8]) -> SymmetricKey {
        hkdf(isk, salt: roomID, info: pskInfo, count: 32).withUnsafeBytes { SymmetricKey(data: $0) }
    }

    /// The Noise prologue, binding the room and both CPace messages (through sid_output).
    static func prologue(roomID: [UInt8], sessionIDOutput: [UInt8]) -> [UInt8] {
        label + [0x00] + roomID + [0x00] + sessionIDOutput
    }

    /// The root key and first chain key of the Double Ratchet, from the `Split()` keys
    /// and the handshake hash.
    static func ratchetSeed(
        initiatorToResponder k1: SymmetricKey, responderToInitiator k2: SymmetricKey, handshakeHash: [UInt8]
    ) -> (RootKey, ChainKey) {
        let ikm = SecretBytes(count: 64) { buffer in
            k1.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: buffer[0..<32]).copyMemory(from: $0) }
            k2.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: buffer[32..<64]).copyMemory(from: $0) }
        }
        return hkdf(ikm, salt: handshakeHash, info: ratchetInfo, count: 64).withUnsafeBytes { raw in
            (RootKey(SecretBytes(raw[0..<32])), ChainKey(key: SecretBytes(raw[32..<64]), index: 0))
        }
    }

    /// HKDF-SHA256 into `count` secret bytes.
    private static func hkdf(_ ikm: SecretBytes, salt: [UInt8], info: [UInt8], count: Int) -> SecretBytes {
        SecretBytes(count: count) { output in
            ikm.withUnsafeBytes { ikm in
                salt.withUnsafeBytes { salt in
                    info.withUnsafeBytes { info in
                        HKDFSHA256.derive(inputKeyMaterial: ikm, salt: salt, info: info, into: output)
                    }
                }
            }
        }
    }
}
