internal import InvisoFuzzSupport
internal import InvisoOffline

/// What the fuzzer checks in InvisoOffline (docs/fuzzing.md, "Fuzzing the offline messages").
enum OfflineFuzzTarget {
    /// The input is an envelope text, a DEFLATE stream, and a paste for ``OpenFuzzTarget``.
    /// Whatever it is, reading it must not crash; what reads
    /// must write in both forms and read back as the same envelope (Android and iOS carry
    /// the same fields). (The kind is a switch over the parts present, covered by the
    /// tests; restating it here would check the switch against itself.)
    static func run(_ bytes: [UInt8]) {
        inflate(bytes)
        OpenFuzzTarget.run(bytes)
        guard let parsed = try? OfflineEnvelope.parse(json: bytes) else { return }
        let (envelope, form) = parsed
        for target in OfflineEnvelope.Form.allCases {
            let text = envelope.json(target)
            let (again, againForm) = mustSucceed("re-reading the \(target) form") { () throws(OfflineError) in
                try OfflineEnvelope.parse(json: Array(text.utf8))
            }
            invariant(again == envelope, "the \(target) form (read as \(form)) changed the envelope")
            invariant(againForm == target, "the \(target) form read as \(againForm)")
            invariant(again.json(target) == text, "writing the \(target) form twice gave two texts")
        }
    }

    /// The same bytes as a raw DEFLATE stream: no crash; what inflates stays within the
    /// limit and survives deflating and inflating again.
    static func inflate(_ bytes: [UInt8]) {
        guard let plain = try? RawDeflate.inflate(bytes) else { return }
        invariant(plain.count <= RawDeflate.maxInflatedByteCount, "inflated past the limit")
        let again = mustSucceed("re-inflating our own deflate") { () throws(OfflineError) in
            try RawDeflate.inflate(RawDeflate.deflate(plain, level: 9))
        }
        invariant(again == plain, "deflate and inflate changed the payload")
    }

    /// Envelopes of every kind in both forms, a few near misses, and compressed envelopes.
    static func seeds() -> [[UInt8]] {
        let device = OfflineEnvelope.Device(
            deviceID: 1, preKey: OfflineEnvelope.PreKey(keyID: 1, publicKey: [5] + Array(1...32)), registrationID: 4242,
            signedPreKey: OfflineEnvelope.SignedPreKey(keyID: 7, publicKey: [5] + Array(33...64), signature: Array(100..<164)))
        let keys = OfflineEnvelope.PreKeyResponse(
            identityKey: [5] + Array(200..<232), devices: [device], kyberPreKeyID: 9,
            kyberPublicKey: [8] + (0..<1568).map { UInt8(truncatingIfNeeded: $0 &* 7) }, kyberSignature: Array(0..<64))
        let classic = OfflineEnvelope.PreKeyResponse(identityKey: [5] + Array(200..<232), devices: [device])
        let address = "3f1c0d7e-8a2b-4c5d-9e6f-0a1b2c3d4e5f"
        let envelopes = [
            OfflineEnvelope(ciphertext: nil, ciphertextType: 0, deviceID: 1, preKeyResponse: keys, address: address, timestamp: 1),
            OfflineEnvelope(ciphertext: nil, ciphertextType: 0, deviceID: 1, preKeyResponse: classic, address: address, timestamp: 2),
            OfflineEnvelope(ciphertext: Array(0..<50), ciphertextType: 3, deviceID: 1, preKeyResponse: nil, address: address, timestamp: 3),
            OfflineEnvelope(ciphertext: Array(0..<7), ciphertextType: 2, deviceID: 1, preKeyResponse: keys, address: address, timestamp: 4),
        ]
        var seeds = envelopes.flatMap { envelope in OfflineEnvelope.Form.allCases.map { Array(envelope.json($0).utf8) } }
        for text in ["[]", "{}", "[null,0,1,null,\"x\",1]", "[\"AAE=\",2,1,[[],{\"publicKey\":\"BQ\"}]]", "{\"ciphertextMessage\":\"AAEC\"}"] {
            seeds.append(Array(text.utf8))
        }
        seeds += envelopes.map { RawDeflate.deflate(Array($0.androidJSON().utf8), level: 9) }
        seeds += OpenFuzzTarget.seeds
        // Pastes as apps mangle them (they read, but cannot be opened in another process).
        seeds += OpenFuzzTarget.world.texts.suffix(4).map { Array(("> " + $0 + "\nthanks").utf8) }
        return seeds
    }
}
