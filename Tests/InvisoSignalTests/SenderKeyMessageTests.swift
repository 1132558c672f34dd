import Foundation
import InvisoCrypto
import InvisoSignal
import InvisoTesting
import Testing

/// `SenderKeyMessage` and `SenderKeyDistributionMessage` wire formats.
@Suite("Sender key wire messages")
struct SenderKeyMessageTests {
    // MARK: SenderKeyMessage

    @Test("SenderKeyMessage bytes: 0x33, fields 1-4 in order, 64-byte XEdDSA signature over the rest")
    func senderKeyMessageBytes() throws {
        var generator = SeededGenerator(seed: 0x5b1)
        let distribution = generator.uuid()
        let signing = generator.keyPair()
        for (chainID, iteration, count) in [(UInt32(0), UInt32(0), 0), (0x7fff_ffff, 300, 16), (UInt32.max, .max, 333)]
        {
            let ciphertext = generator.bytes(count)
            var signer = SeededGenerator(seed: UInt64(count))
            let message = SenderKeyMessage(
                distributionID: distribution, chainID: chainID, iteration: iteration, ciphertext: ciphertext,
                signingKey: signing.privateKey, using: &signer)
            let body: [UInt8] =
                [0x33] + Hand.bytes(0x0a, distribution.testBytes) + Hand.number(0x10, UInt64(chainID))
                + Hand.number(0x18, UInt64(iteration)) + Hand.bytes(0x22, ciphertext)
            #expect(message.serialized.count == body.count + 64)
            #expect(Array(message.serialized.prefix(body.count)) == body)
            let signature = Array(message.serialized.suffix(64))
            #expect(XEdDSA.verify(signature, for: body, publicKey: signing.publicKey.rawRepresentation))
            #expect(message.verifySignature(signing.publicKey))
            #expect(!message.verifySignature(generator.keyPair().publicKey))
            // The same generator state gives the same bytes.
            var again = SeededGenerator(seed: UInt64(count))
            #expect(
                SenderKeyMessage(
                    distributionID: distribution, chainID: chainID, iteration: iteration, ciphertext: ciphertext,
                    signingKey: signing.privateKey, using: &again
                ).serialized == message.serialized)

            let parsed = try SenderKeyMessage(serialized: message.serialized)
            #expect(parsed == message)
            #expect(parsed.messageVersion == 3)
            #expect(parsed.distributionID == distribution)
            #expect(parsed.chainID == chainID && parsed.iteration == iteration && parsed.ciphertext == ciphertext)
            #expect(parsed.verifySignature(signing.publicKey))
        }
        #expect(SenderKeyMessage.signatureByteCount == 64)
    }

    @Test("SenderKeyMessage parsing: version nibbles, length, required fields, distribution id size")
    func senderKeyMessageParsingRules() throws {
        var generator = SeededGenerator(seed: 0x5b2)
        let distribution = generator.uuid().testBytes
        let uuid = Hand.bytes(0x0a, distribution)
        let chain = Hand.number(0x10, 5)
        let iteration = Hand.number(0x18, 6)
        let ciphertext = Hand.bytes(0x22, [1, 2, 3])
        let signature = [UInt8](repeating: 0, count: 64)
        func parse(_ fields: [UInt8], version: UInt8 = 0x33) throws -> SenderKeyMessage {
            try SenderKeyMessage(serialized: [version] + fields + signature)
        }
        #expect(try parse(uuid + chain + iteration + ciphertext).iteration == 6)
        for nibble: UInt8 in 0...15 {
            let version = nibble << 4 | 3
            switch nibble {
            case 0..<3:
                #expect(throws: SignalError.legacyVersion) {
                    try parse(uuid + chain + iteration + ciphertext, version: version)
                }
            case 3: #expect(try parse(uuid + chain + iteration + ciphertext, version: version).messageVersion == 3)
            default:
                #expect(throws: SignalError.unrecognizedVersion, "\(nibble)") {
                    try parse(uuid + chain + iteration + ciphertext, version: version)
                }
            }
        }
        for (name, fields) in [
            ("distribution_uuid", chain + iteration + ciphertext), ("chain_id", uuid + iteration + ciphertext),
            ("iteration", uuid + chain + ciphertext), ("ciphertext", uuid + chain + iteration),
        ] {
            #expect(throws: SignalError.invalidMessage, "missing \(name)") { try parse(fields) }
        }
        for size in [0, 15, 17, 32] {
            #expect(throws: SignalError.invalidMessage, "uuid of \(size) bytes") {
                try parse(Hand.bytes(0x0a, [UInt8](repeating: 1, count: size)) + chain + iteration + ciphertext)
            }
        }
        for length in 0..<65 {
            #expect(throws: SignalError.invalidMessage, "\(length) bytes") {
                try SenderKeyMessage(serialized: [0x33] + [UInt8](repeating: 0, count: max(0, length - 1)))
            }
        }
        #expect(try parse(uuid + chain + iteration + ciphertext + Hand.number(0x28, 1)).chainID == 5)
    }

    @Test("SenderKeyMessage: every truncation is rejected; every flipped byte fails parsing or the signature")
    func senderKeyMessageTampering() throws {
        var generator = SeededGenerator(seed: 0x5b3)
        let signing = generator.keyPair()
        let message = SenderKeyMessage(
            distributionID: generator.uuid(), chainID: 77, iteration: 1000, ciphertext: generator.bytes(32),
            signingKey: signing.privateKey, using: &generator)
        let bytes = message.serialized
        for length in 0..<bytes.count {
            #expect(throws: SignalError.self, "prefix \(length)") {
                try SenderKeyMessage(serialized: bytes.prefix(length))
            }
        }
        var byParse = 0
        var bySignature = 0
        for index in bytes.indices {
            var tampered = bytes
            tampered[index] ^= 0x01
            if let parsed = try? SenderKeyMessage(serialized: tampered) {
                #expect(!parsed.verifySignature(signing.publicKey), "byte \(index)")
                bySignature += 1
            } else {
                byParse += 1
            }
        }
        #expect(byParse + bySignature == bytes.count)
    }

    // MARK: SenderKeyDistributionMessage

    @Test("SenderKeyDistributionMessage bytes: 0x33, fields 1-5 in order; round trip; redacted description")
    func distributionMessageBytes() throws {
        var generator = SeededGenerator(seed: 0x5b4)
        let distribution = generator.uuid()
        let chainKey = generator.bytes(32)
        let signing = generator.keyPair().publicKey
        for (chainID, iteration) in [(UInt32(0), UInt32(0)), (0x1234_5678, 25_000), (.max, .max)] {
            let message = try SenderKeyDistributionMessage(
                distributionID: distribution, chainID: chainID, iteration: iteration, chainKey: SecretBytes(chainKey),
                signingKey: signing)
            let expected: [UInt8] =
                [0x33] + Hand.bytes(0x0a, distribution.testBytes) + Hand.number(0x10, UInt64(chainID))
                + Hand.number(0x18, UInt64(iteration)) + Hand.bytes(0x22, chainKey)
                + Hand.bytes(0x2a, signing.serialized)
            #expect(message.serialized == expected)
            let parsed = try SenderKeyDistributionMessage(serialized: expected)
            #expect(parsed == message)
            #expect(parsed.messageVersion == 3 && parsed.chainID == chainID && parsed.iteration == iteration)
            #expect(parsed.chainKey.testBytes == chainKey && parsed.signingKey == signing)
            #expect(parsed.distributionID == distribution)
            #expect(parsed.serialized == expected)

            let text = "\(message) \(String(reflecting: message))"
            #expect(!text.contains(chainKey.hex))
            var dumped = ""
            dump(message, to: &dumped)
            #expect(!dumped.contains(chainKey.hex) && !dumped.contains("\(chainKey)"))
        }
        #expect(throws: SignalError.invalidArgument) {
            try SenderKeyDistributionMessage(
                distributionID: distribution, chainID: 1, iteration: 0, chainKey: SecretBytes(chainKey.dropLast()),
                signingKey: signing)
        }
    }

    @Test("SenderKeyDistributionMessage parsing: versions, required fields, sizes, keys, truncation")
    func distributionMessageParsingRules() throws {
        var generator = SeededGenerator(seed: 0x5b5)
        let uuid = Hand.bytes(0x0a, generator.uuid().testBytes)
        let chain = Hand.number(0x10, 9)
        let iteration = Hand.number(0x18, 10)
        let chainKey = Hand.bytes(0x22, generator.bytes(32))
        let signingKey = generator.keyPair().publicKey.serialized
        let signing = Hand.bytes(0x2a, signingKey)
        func parse(_ fields: [UInt8], version: UInt8 = 0x33) throws -> SenderKeyDistributionMessage {
            try SenderKeyDistributionMessage(serialized: [version] + fields)
        }
        let all = uuid + chain + iteration + chainKey + signing
        #expect(try parse(all).iteration == 10)
        for nibble: UInt8 in [0, 1, 2] {
            #expect(throws: SignalError.legacyVersion) { try parse(all, version: nibble << 4 | 3) }
        }
        for nibble: UInt8 in 4...15 {
            #expect(throws: SignalError.unrecognizedVersion) { try parse(all, version: nibble << 4 | 3) }
        }
        for (name, fields) in [
            ("distribution_uuid", chain + iteration + chainKey + signing),
            ("chain_id", uuid + iteration + chainKey + signing), ("iteration", uuid + chain + chainKey + signing),
            ("chain_key", uuid + chain + iteration + signing), ("signing_key", uuid + chain + iteration + chainKey),
        ] {
            #expect(throws: SignalError.invalidMessage, "missing \(name)") { try parse(fields) }
        }
        #expect(throws: SignalError.invalidMessage) {
            try parse(Hand.bytes(0x0a, [1, 2, 3]) + chain + iteration + chainKey + signing)
        }
        for size in [0, 31, 33, 64] {
            #expect(throws: SignalError.invalidMessage, "chain key of \(size) bytes") {
                try parse(uuid + chain + iteration + Hand.bytes(0x22, [UInt8](repeating: 2, count: size)) + signing)
            }
        }
        var wrongType = signingKey
        wrongType[0] = 0x08
        #expect(throws: SignalError.invalidKeyType) {
            try parse(uuid + chain + iteration + chainKey + Hand.bytes(0x2a, wrongType))
        }
        #expect(throws: SignalError.invalidKey) {
            try parse(uuid + chain + iteration + chainKey + Hand.bytes(0x2a, Array(signingKey.dropFirst())))
        }
        #expect(throws: SignalError.invalidMessage) { try SenderKeyDistributionMessage(serialized: []) }

        let bytes = [0x33] + all
        for length in 0..<bytes.count {
            #expect(throws: SignalError.self, "prefix \(length)") {
                try SenderKeyDistributionMessage(serialized: bytes.prefix(length))
            }
        }
        for index in bytes.indices {
            var tampered = bytes
            tampered[index] ^= 0x80
            _ = try? SenderKeyDistributionMessage(serialized: tampered)
        }
    }
}
