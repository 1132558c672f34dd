internal import Crypto
internal import Foundation
internal import InvisoCrypto
internal import InvisoNoise
internal import InvisoFuzzSupport

/// Fixed key material, so every run of the harness is deterministic and a crash input
/// reproduces exactly. Private keys are SHA-256 of a label; never use such keys outside tests.
struct FuzzKeys: Sendable {
    let initiatorStatic: NoiseKeyPair
    let responderStatic: NoiseKeyPair
    /// A static key the responder used to have: an initiator that still pins it sends an
    /// `IK` first message the responder cannot read, which starts Noise Pipes' fallback.
    let responderOldStatic: NoiseKeyPair
    let initiatorEphemeral: NoiseKeyPair
    let responderEphemeral: NoiseKeyPair
    /// Returned by the ephemeral generator, which the harness never needs because every
    /// party is given its ephemeral up front; fixed so that even a surprise call is repeatable.
    let spareEphemeral: NoiseKeyPair

    init() {
        initiatorStatic = Self.keyPair("initiator static")
        responderStatic = Self.keyPair("responder static")
        responderOldStatic = Self.keyPair("responder old static")
        initiatorEphemeral = Self.keyPair("initiator ephemeral")
        responderEphemeral = Self.keyPair("responder ephemeral")
        spareEphemeral = Self.keyPair("spare ephemeral")
    }

    /// The `index`-th pre-shared key (32 bytes).
    func preSharedKey(_ index: Int) -> SymmetricKey {
        SymmetricKey(data: Self.derive("psk \(index)"))
    }

    /// A generator that always returns the spare ephemeral.
    var ephemeralGenerator: @Sendable () -> NoiseKeyPair {
        { [spareEphemeral] in spareEphemeral }
    }

    private static func derive(_ label: String) -> [UInt8] {
        Array(SHA256.hash(data: Array("inviso-noise-fuzz/\(label)".utf8)))
    }

    private static func keyPair(_ label: String) -> NoiseKeyPair {
        mustSucceed("importing the fixed key \(label)") { () throws(NoiseError) in
            try NoiseKeyPair(rawPrivateKey: derive(label))
        }
    }
}

/// Curve25519 public keys of small order (and their encodings with bit 255 set, which
/// X25519 ignores): any DH with them yields the all-zero secret the library must refuse.
/// The random mutator is unlikely to build these, so the harness splices them in.
enum LowOrderPoints {
    static let all: [[UInt8]] = {
        let base: [[UInt8]] = [
            [UInt8](repeating: 0, count: 32),
            [1] + [UInt8](repeating: 0, count: 31),
            hex("e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"),
            hex("5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157"),
            [0xEC] + [UInt8](repeating: 0xFF, count: 30) + [0x7F],  // p − 1
            [0xED] + [UInt8](repeating: 0xFF, count: 30) + [0x7F],  // p
            [0xEE] + [UInt8](repeating: 0xFF, count: 30) + [0x7F],  // p + 1
        ]
        return base + base.map { point in
            var high = point
            high[31] |= 0x80
            return high
        }
    }()

    private static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    /// Checks once that every listed point really forces the all-zero secret.
    static func verify(with keys: FuzzKeys) {
        for (index, point) in all.enumerated() {
            do throws(X25519Error) {
                _ = try X25519.sharedSecret(keys.initiatorStatic.privateKey, with: point)
                fatalError("low-order point \(index) did not produce the all-zero secret")
            } catch {
                invariant(error == .allZeroSharedSecret, "low-order point \(index): unexpected \(error)")
            }
        }
    }
}
