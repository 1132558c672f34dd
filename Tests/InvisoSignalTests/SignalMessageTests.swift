import Crypto
import Foundation
import InvisoCrypto
import InvisoSignal
import InvisoTesting
import Testing

/// `SignalMessage` and `PreKeySignalMessage`: exact bytes built by hand, round trips, every
/// parsing rule, truncation and tampering.
@Suite("SignalMessage and PreKeySignalMessage")
struct SignalMessageTests {
    /// Keys and a MAC key from a fixed seed.
    struct Fixture {
        let macKeyBytes: [UInt8]
        let macKey: SecretBytes
        let ratchetKey: ECPublicKey
        let sender: IdentityKey
        let receiver: IdentityKey
        var generator: SeededGenerator

        init(seed: UInt64) {
            var generator = SeededGenerator(seed: seed)
            macKeyBytes = generator.bytes(32)
            macKey = SecretBytes(macKeyBytes)
            ratchetKey = generator.keyPair().publicKey
            sender = IdentityKey(generator.keyPair().publicKey)
            receiver = IdentityKey(generator.keyPair().publicKey)
            self.generator = generator
        }

        /// HMAC-SHA256 computed here with swift-crypto, truncated to 8 bytes.
        func mac(_ body: [UInt8], sender: IdentityKey? = nil, receiver: IdentityKey? = nil) -> [UInt8] {
            var hmac = HMAC<SHA256>(key: SymmetricKey(data: macKeyBytes))
            hmac.update(data: (sender ?? self.sender).serialized)
            hmac.update(data: (receiver ?? self.receiver).serialized)
            hmac.update(data: body)
            return Array(Array(hmac.finalize()).prefix(8))
        }

        func message(
            version: UInt8 = 4, counter: UInt32 = 0, previousCounter: UInt32 = 0, ciphertext: [UInt8] = [1, 2, 3]
        ) throws -> SignalMessage {
            try SignalMessage(
                messageVersion: version, macKey: macKey, senderRatchetKey: ratchetKey, counter: counter,
                previousCounter: previousCounter, ciphertext: ciphertext, senderIdentityKey: sender,
                receiverIdentityKey: receiver)
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let version: UInt8
        let counter: UInt32
        let previousCounter: UInt32
        let ciphertextCount: Int
        var testDescription: String {
            "v\(version) counter \(counter) previous \(previousCounter) ct \(ciphertextCount)"
        }
    }

    static let cases: [Case] = [
        Case(version: 4, counter: 0, previousCounter: 0, ciphertextCount: 0),
        Case(version: 4, counter: 1, previousCounter: 0, ciphertextCount: 16),
        Case(version: 4, counter: 300, previousCounter: 127, ciphertextCount: 200),
        Case(version: 3, counter: .max, previousCounter: 128, ciphertextCount: 48),
        Case(version: 3, counter: 2000, previousCounter: .max, ciphertextCount: 1024),
    ]

    // MARK: SignalMessage bytes

    @Test("SignalMessage bytes: version byte, fields 1-4 in order (zeros written), 8-byte HMAC", arguments: cases)
    func signalMessageBytes(_ testCase: Case) throws {
        var fixture = Fixture(seed: 0x5161)
        let ciphertext = fixture.generator.bytes(testCase.ciphertextCount)
        let message = try fixture.message(
            version: testCase.version, counter: testCase.counter, previousCounter: testCase.previousCounter,
            ciphertext: ciphertext)

        let body: [UInt8] =
            [testCase.version == 4 ? 0x44 : 0x34]
            + Hand.bytes(0x0a, fixture.ratchetKey.serialized)
            + Hand.number(0x10, UInt64(testCase.counter))
            + Hand.number(0x18, UInt64(testCase.previousCounter))
            + Hand.bytes(0x22, ciphertext)
        let expected = body + fixture.mac(body)
        #expect(message.serialized == expected)
        #expect(message.messageVersion == testCase.version)
        #expect(message.counter == testCase.counter)
        #expect(message.previousCounter == testCase.previousCounter)
        #expect(message.ciphertext == ciphertext)
        #expect(message.senderRatchetKey == fixture.ratchetKey)

        let parsed = try SignalMessage(serialized: expected)
        #expect(parsed == message)
        #expect(parsed.serialized == expected)
        #expect(
            parsed.verifyMAC(
                senderIdentityKey: fixture.sender, receiverIdentityKey: fixture.receiver, macKey: fixture.macKey))
        // The identities are bound in order, and the key matters.
        #expect(
            !parsed.verifyMAC(
                senderIdentityKey: fixture.receiver, receiverIdentityKey: fixture.sender, macKey: fixture.macKey))
        #expect(
            !parsed.verifyMAC(
                senderIdentityKey: fixture.sender, receiverIdentityKey: fixture.sender, macKey: fixture.macKey))
        var wrongKey = fixture.macKeyBytes
        wrongKey[0] ^= 1
        #expect(
            !parsed.verifyMAC(
                senderIdentityKey: fixture.sender, receiverIdentityKey: fixture.receiver, macKey: SecretBytes(wrongKey))
        )
    }

    @Test("CiphertextMessageType values")
    func messageTypes() {
        #expect(CiphertextMessageType.whisper.rawValue == 2)
        #expect(CiphertextMessageType.preKey.rawValue == 3)
        #expect(CiphertextMessageType.senderKey.rawValue == 7)
        #expect(CiphertextMessageType.plaintext.rawValue == 8)
        #expect(CiphertextMessageType(rawValue: 4) == nil)
        #expect(SignalMessage.macByteCount == 8)
    }

    // MARK: SignalMessage parsing rules

    /// A hand-built SignalMessage body (version byte and protobuf) followed by 8 MAC bytes
    /// that are not checked by the parser.
    private func rawSignalMessage(version: UInt8 = 0x44, _ fields: [UInt8]) -> [UInt8] {
        [version] + fields + [UInt8](repeating: 0xee, count: 8)
    }

    @Test("SignalMessage parsing: version nibbles, required fields, defaults, ignored fields, keys")
    func signalMessageParsingRules() throws {
        let fixture = Fixture(seed: 0x5162)
        let key = Hand.bytes(0x0a, fixture.ratchetKey.serialized)
        let counter = Hand.number(0x10, 5)
        let previous = Hand.number(0x18, 4)
        let ciphertext = Hand.bytes(0x22, [9, 9, 9])
        let all = key + counter + previous + ciphertext

        // Version nibble: below 3 legacy, above 4 unrecognized.
        for nibble: UInt8 in 0...15 {
            let bytes = rawSignalMessage(version: nibble << 4 | 4, all)
            switch nibble {
            case 0..<3: #expect(throws: SignalError.legacyVersion, "\(nibble)") { try SignalMessage(serialized: bytes) }
            case 3, 4: #expect(try SignalMessage(serialized: bytes).messageVersion == nibble)
            default:
                #expect(throws: SignalError.unrecognizedVersion, "\(nibble)") { try SignalMessage(serialized: bytes) }
            }
        }

        // Required fields.
        for (name, fields) in [
            ("ratchet_key", counter + previous + ciphertext), ("counter", key + previous + ciphertext),
            ("ciphertext", key + counter + previous), ("all", []),
        ] {
            #expect(throws: SignalError.invalidMessage, "missing \(name)") {
                try SignalMessage(serialized: rawSignalMessage(fields))
            }
        }
        // previous_counter defaults to 0.
        let noPrevious = try SignalMessage(serialized: rawSignalMessage(key + counter + ciphertext))
        #expect(noPrevious.previousCounter == 0)
        #expect(noPrevious.counter == 5)
        #expect(noPrevious.ciphertext == [9, 9, 9])

        // Fields 5 (pq_ratchet) and 6 (addresses) are accepted and ignored, as are unknown fields.
        let extras =
            all + Hand.bytes(0x2a, [1, 2, 3, 4]) + Hand.bytes(0x32, [UInt8](repeating: 7, count: 36))
            + Hand.number(0x48, 1) + Hand.bytes(0x52, [0])
        let withExtras = try SignalMessage(serialized: rawSignalMessage(extras))
        #expect(withExtras.counter == 5 && withExtras.previousCounter == 4 && withExtras.ciphertext == [9, 9, 9])
        #expect(withExtras.serialized == rawSignalMessage(extras))
        // Fields out of order still parse.
        #expect(try SignalMessage(serialized: rawSignalMessage(ciphertext + previous + counter + key)).counter == 5)
        // Known fields with the wrong wire type are malformed.
        #expect(throws: SignalError.invalidMessage) {
            try SignalMessage(serialized: rawSignalMessage(all + Hand.number(0x28, 1)))
        }
        #expect(throws: SignalError.invalidMessage) {
            try SignalMessage(serialized: rawSignalMessage(Hand.bytes(0x12, [5]) + key + previous + ciphertext))
        }
        // Counters must fit 32 bits.
        #expect(throws: SignalError.invalidMessage) {
            try SignalMessage(serialized: rawSignalMessage(key + Hand.number(0x10, 1 << 32) + ciphertext))
        }
        #expect(
            try SignalMessage(serialized: rawSignalMessage(key + Hand.number(0x10, UInt64(UInt32.max)) + ciphertext))
                .counter == .max)

        // The ratchet key must be a serialized Curve25519 key.
        var wrongType = fixture.ratchetKey.serialized
        wrongType[0] = 0x06
        #expect(throws: SignalError.invalidKeyType) {
            try SignalMessage(serialized: rawSignalMessage(Hand.bytes(0x0a, wrongType) + counter + ciphertext))
        }
        #expect(throws: SignalError.invalidKey) {
            try SignalMessage(
                serialized: rawSignalMessage(
                    Hand.bytes(0x0a, fixture.ratchetKey.rawRepresentation) + counter + ciphertext))
        }
        #expect(throws: SignalError.invalidKey) {
            try SignalMessage(
                serialized: rawSignalMessage(
                    Hand.bytes(0x0a, fixture.ratchetKey.serialized + [0]) + counter + ciphertext))
        }

        // Too short: fewer than 1 + 8 bytes; exactly 9 has an empty protobuf.
        for length in 0...8 {
            #expect(throws: SignalError.invalidMessage, "\(length) bytes") {
                try SignalMessage(serialized: [0x44] + [UInt8](repeating: 0, count: max(0, length - 1)))
            }
        }
        #expect(throws: SignalError.invalidMessage) { try SignalMessage(serialized: rawSignalMessage([])) }
        // Garbage protobuf.
        #expect(throws: SignalError.invalidMessage) { try SignalMessage(serialized: rawSignalMessage([0xff, 0xff])) }
    }

    @Test("SignalMessage init rejects versions other than 3 and 4")
    func signalMessageVersionArgument() throws {
        let fixture = Fixture(seed: 0x5163)
        for version: UInt8 in [0, 1, 2, 5, 15, 255] {
            #expect(throws: SignalError.invalidArgument, "\(version)") { try fixture.message(version: version) }
        }
    }

    @Test("SignalMessage: every truncation is rejected; every flipped byte fails parsing or the MAC")
    func signalMessageTruncationAndTampering() throws {
        var fixture = Fixture(seed: 0x5164)
        let ciphertext = fixture.generator.bytes(48)
        let message = try fixture.message(counter: 300, previousCounter: 2, ciphertext: ciphertext)
        let bytes = message.serialized

        for length in 0..<bytes.count {
            #expect(throws: SignalError.self, "prefix \(length)") {
                try SignalMessage(serialized: bytes.prefix(length))
            }
        }

        var rejectedByParse = 0
        var rejectedByMAC = 0
        for index in bytes.indices {
            for mask: UInt8 in [0x01, 0x80, 0xff] {
                var tampered = bytes
                tampered[index] ^= mask
                guard let parsed = try? SignalMessage(serialized: tampered) else {
                    rejectedByParse += 1
                    continue
                }
                #expect(
                    !parsed.verifyMAC(
                        senderIdentityKey: fixture.sender, receiverIdentityKey: fixture.receiver, macKey: fixture.macKey
                    ),
                    "byte \(index) mask \(mask)")
                rejectedByMAC += 1
            }
        }
        #expect(rejectedByParse + rejectedByMAC == bytes.count * 3)
        #expect(rejectedByMAC > 0 && rejectedByParse > 0)
        // Appending a byte also breaks the MAC (the last 8 bytes move).
        if let extended = try? SignalMessage(serialized: bytes + [0]) {
            #expect(
                !extended.verifyMAC(
                    senderIdentityKey: fixture.sender, receiverIdentityKey: fixture.receiver, macKey: fixture.macKey))
        }
    }

    // MARK: PreKeySignalMessage

    struct PreKeyFixture {
        let base: Fixture
        let baseKey: ECPublicKey
        let identity: IdentityKey
        let kyberCiphertext: [UInt8]
        let inner4: SignalMessage
        let inner3: SignalMessage

        init(seed: UInt64) throws {
            var base = Fixture(seed: seed)
            baseKey = base.generator.keyPair().publicKey
            identity = IdentityKey(base.generator.keyPair().publicKey)
            kyberCiphertext = base.generator.bytes(1568)
            inner4 = try base.message(version: 4, counter: 0, previousCounter: 0, ciphertext: base.generator.bytes(32))
            inner3 = try base.message(version: 3, counter: 0, previousCounter: 0, ciphertext: base.generator.bytes(32))
            self.base = base
        }

        func make(
            version: UInt8 = 4, registrationID: UInt32 = 1234, preKeyID: UInt32? = 31337, signedPreKeyID: UInt32 = 22,
            kyberPreKeyID: UInt32? = 0, kyberCiphertext: [UInt8]?? = .none, message: SignalMessage? = nil
        ) throws -> PreKeySignalMessage {
            try PreKeySignalMessage(
                messageVersion: version, registrationID: registrationID, preKeyID: preKeyID,
                signedPreKeyID: signedPreKeyID, kyberPreKeyID: kyberPreKeyID,
                kyberCiphertext: kyberCiphertext ?? self.kyberCiphertext, baseKey: baseKey, identityKey: identity,
                message: message ?? (version == 3 ? inner3 : inner4))
        }
    }

    @Test("PreKeySignalMessage v4 bytes: fields 1-8 in order, Kyber ciphertext prefixed with 0x08")
    func preKeyMessageV4Bytes() throws {
        let fixture = try PreKeyFixture(seed: 0x5165)
        for preKeyID: UInt32? in [31337, 0, nil] {
            let message = try fixture.make(preKeyID: preKeyID, kyberPreKeyID: 0)
            var expected: [UInt8] = [0x44]
            if let preKeyID { expected += Hand.number(0x08, UInt64(preKeyID)) }
            expected += Hand.bytes(0x12, fixture.baseKey.serialized)
            expected += Hand.bytes(0x1a, fixture.identity.serialized)
            expected += Hand.bytes(0x22, fixture.inner4.serialized)
            expected += Hand.number(0x28, 1234)
            expected += Hand.number(0x30, 22)
            expected += Hand.number(0x38, 0)
            expected += [0x42, 0xa1, 0x0c, 0x08] + fixture.kyberCiphertext  // length 1569 = 0xa1 0x0c
            #expect(message.serialized == expected, "pre-key id \(String(describing: preKeyID))")
            #expect(message.kyberCiphertext == fixture.kyberCiphertext)

            let parsed = try PreKeySignalMessage(serialized: expected)
            #expect(parsed == message)
            #expect(parsed.preKeyID == preKeyID)
            #expect(parsed.registrationID == 1234)
            #expect(parsed.signedPreKeyID == 22)
            #expect(parsed.kyberPreKeyID == 0)
            #expect(parsed.kyberCiphertext == fixture.kyberCiphertext)
            #expect(parsed.baseKey == fixture.baseKey)
            #expect(parsed.identityKey == fixture.identity)
            #expect(parsed.message == fixture.inner4)
            #expect(parsed.messageVersion == 4)
            #expect(
                parsed.message.verifyMAC(
                    senderIdentityKey: fixture.base.sender, receiverIdentityKey: fixture.base.receiver,
                    macKey: fixture.base.macKey))
        }
    }

    @Test("PreKeySignalMessage v3 bytes: no Kyber fields, version byte 0x34")
    func preKeyMessageV3Bytes() throws {
        let fixture = try PreKeyFixture(seed: 0x5166)
        let message = try fixture.make(
            version: 3, registrationID: 0, preKeyID: nil, signedPreKeyID: .max, kyberPreKeyID: nil,
            kyberCiphertext: .some(nil))
        let expected: [UInt8] =
            [0x34] + Hand.bytes(0x12, fixture.baseKey.serialized) + Hand.bytes(0x1a, fixture.identity.serialized)
            + Hand.bytes(0x22, fixture.inner3.serialized) + Hand.number(0x28, 0) + Hand.number(0x30, UInt64(UInt32.max))
        #expect(message.serialized == expected)
        let parsed = try PreKeySignalMessage(serialized: expected)
        #expect(parsed == message)
        #expect(parsed.kyberPreKeyID == nil && parsed.kyberCiphertext == nil && parsed.preKeyID == nil)
        #expect(parsed.messageVersion == 3)
    }

    @Test("PreKeySignalMessage parsing: required fields, defaults, Kyber rules, inner version, version nibbles")
    func preKeyParsingRules() throws {
        let fixture = try PreKeyFixture(seed: 0x5167)
        let preKey = Hand.number(0x08, 7)
        let base = Hand.bytes(0x12, fixture.baseKey.serialized)
        let identity = Hand.bytes(0x1a, fixture.identity.serialized)
        let inner4 = Hand.bytes(0x22, fixture.inner4.serialized)
        let inner3 = Hand.bytes(0x22, fixture.inner3.serialized)
        let registration = Hand.number(0x28, 99)
        let signed = Hand.number(0x30, 3)
        let kyberID = Hand.number(0x38, 4)
        let kyberCT = Hand.bytes(0x42, [0x08] + fixture.kyberCiphertext)
        func parse(_ fields: [UInt8], version: UInt8 = 0x44) throws -> PreKeySignalMessage {
            try PreKeySignalMessage(serialized: [version] + fields)
        }

        let full = try parse(preKey + base + identity + inner4 + registration + signed + kyberID + kyberCT)
        #expect(full.preKeyID == 7 && full.registrationID == 99 && full.signedPreKeyID == 3 && full.kyberPreKeyID == 4)

        // Required: base key, identity key, message, signed pre-key id.
        let required: [(String, [UInt8])] = [
            ("base_key", identity + inner4 + signed + kyberID + kyberCT),
            ("identity_key", base + inner4 + signed + kyberID + kyberCT),
            ("message", base + identity + signed + kyberID + kyberCT),
            ("signed_pre_key_id", base + identity + inner4 + kyberID + kyberCT),
        ]
        for (name, fields) in required {
            #expect(throws: SignalError.invalidMessage, "missing \(name)") { try parse(fields) }
        }
        // Registration id defaults to 0, the one-time pre-key is optional.
        let minimal = try parse(base + identity + inner4 + signed + kyberID + kyberCT)
        #expect(minimal.registrationID == 0 && minimal.preKeyID == nil)
        let minimal3 = try parse(base + identity + inner3 + signed, version: 0x34)
        #expect(minimal3.registrationID == 0 && minimal3.kyberPreKeyID == nil)

        // Kyber: version 4 needs both fields, version 3 neither.
        #expect(throws: SignalError.invalidMessage) { try parse(base + identity + inner4 + signed) }
        #expect(throws: SignalError.invalidMessage) { try parse(base + identity + inner4 + signed + kyberID) }
        #expect(throws: SignalError.invalidMessage) { try parse(base + identity + inner4 + signed + kyberCT) }
        #expect(throws: SignalError.invalidMessage) {
            try parse(base + identity + inner3 + signed + kyberID + kyberCT, version: 0x34)
        }
        #expect(throws: SignalError.invalidMessage) {
            try parse(base + identity + inner3 + signed + kyberID, version: 0x34)
        }
        #expect(throws: SignalError.invalidMessage) {
            try parse(base + identity + inner3 + signed + kyberCT, version: 0x34)
        }
        // The Kyber ciphertext is exactly 0x08 ‖ 1568 bytes.
        let badCiphertexts: [[UInt8]] = [
            fixture.kyberCiphertext, [0x08] + fixture.kyberCiphertext.dropLast(),
            [0x08] + fixture.kyberCiphertext + [0],
            [0x0a] + fixture.kyberCiphertext, [0x07] + fixture.kyberCiphertext, [0x08], [],
        ]
        for bad in badCiphertexts {
            #expect(throws: SignalError.invalidMessage, "\(bad.count) bytes") {
                try parse(base + identity + inner4 + signed + kyberID + Hand.bytes(0x42, bad))
            }
        }
        // The inner message's version must be the outer one.
        #expect(throws: SignalError.invalidMessage) { try parse(base + identity + inner3 + signed + kyberID + kyberCT) }
        #expect(throws: SignalError.invalidMessage) { try parse(base + identity + inner4 + signed, version: 0x34) }
        // A malformed inner message.
        #expect(throws: SignalError.invalidMessage) {
            try parse(base + identity + Hand.bytes(0x22, [0x44, 1, 2]) + signed + kyberID + kyberCT)
        }
        #expect(throws: SignalError.legacyVersion) {
            try parse(
                base + identity + Hand.bytes(0x22, [0x24] + fixture.inner4.serialized.dropFirst()) + signed + kyberID
                    + kyberCT)
        }
        // Keys must parse.
        var badKey = fixture.baseKey.serialized
        badKey[0] = 0
        #expect(throws: SignalError.invalidKeyType) {
            try parse(Hand.bytes(0x12, badKey) + identity + inner4 + signed + kyberID + kyberCT)
        }
        #expect(throws: SignalError.invalidKey) {
            try parse(
                base + Hand.bytes(0x1a, fixture.identity.serialized.dropLast()) + inner4 + signed + kyberID + kyberCT)
        }

        // Version nibble.
        let body4 = base + identity + inner4 + signed + kyberID + kyberCT
        for nibble: UInt8 in [0, 1, 2] {
            #expect(throws: SignalError.legacyVersion) { try parse(body4, version: nibble << 4 | 4) }
        }
        for nibble: UInt8 in 5...15 {
            #expect(throws: SignalError.unrecognizedVersion) { try parse(body4, version: nibble << 4 | 4) }
        }
        #expect(throws: SignalError.invalidMessage) { try PreKeySignalMessage(serialized: []) }
        #expect(throws: SignalError.invalidMessage) { try PreKeySignalMessage(serialized: [0x44]) }
        // Unknown fields are skipped.
        #expect(try parse(body4 + Hand.bytes(0x4a, [1, 2])).signedPreKeyID == 3)
    }

    @Test("PreKeySignalMessage init argument checks")
    func preKeyInitRules() throws {
        let fixture = try PreKeyFixture(seed: 0x5168)
        #expect(throws: Never.self) { try fixture.make() }
        #expect(throws: SignalError.invalidArgument) { try fixture.make(version: 5) }
        #expect(throws: SignalError.invalidArgument) { try fixture.make(version: 2) }
        #expect(throws: SignalError.invalidArgument) { try fixture.make(version: 4, message: fixture.inner3) }
        #expect(throws: SignalError.invalidArgument) {
            try fixture.make(version: 3, kyberPreKeyID: nil, kyberCiphertext: .some(nil), message: fixture.inner4)
        }
        #expect(throws: SignalError.invalidArgument) { try fixture.make(version: 4, kyberPreKeyID: nil) }
        #expect(throws: SignalError.invalidArgument) { try fixture.make(version: 4, kyberCiphertext: .some(nil)) }
        #expect(throws: SignalError.invalidArgument) { try fixture.make(version: 3, kyberCiphertext: .some(nil)) }
        #expect(throws: SignalError.invalidArgument) { try fixture.make(version: 3, kyberPreKeyID: nil) }
        #expect(throws: SignalError.invalidArgument) {
            try fixture.make(kyberCiphertext: .some([0x08] + fixture.kyberCiphertext))
        }
        #expect(throws: SignalError.invalidArgument) { try fixture.make(kyberCiphertext: .some([])) }
    }

    @Test("PreKeySignalMessage: every truncation is rejected, every flipped byte is handled without a crash")
    func preKeyTruncationAndTampering() throws {
        let fixture = try PreKeyFixture(seed: 0x5169)
        for message in [
            try fixture.make(),
            try fixture.make(version: 3, preKeyID: nil, kyberPreKeyID: nil, kyberCiphertext: .some(nil)),
        ] {
            let bytes = message.serialized
            for length in 0..<bytes.count {
                #expect(throws: SignalError.self, "prefix \(length)") {
                    try PreKeySignalMessage(serialized: bytes.prefix(length))
                }
            }
            // Tampering either fails to parse or changes what was parsed (the inner MAC or the
            // PQXDH keys then fail in the session layer).
            var changed = 0
            var rejected = 0
            for index in bytes.indices {
                var tampered = bytes
                tampered[index] ^= 0x01
                if let parsed = try? PreKeySignalMessage(serialized: tampered) {
                    #expect(parsed != message, "byte \(index)")
                    changed += 1
                } else {
                    rejected += 1
                }
            }
            #expect(changed + rejected == bytes.count)
        }
    }
}
