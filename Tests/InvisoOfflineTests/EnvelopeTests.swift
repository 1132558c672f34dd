import Foundation
import InvisoCrypto
import Testing

@testable import InvisoOffline

/// The envelope codec against `Resources/offline-vectors.json`, written by
/// `scripts/vectors/offline_vectors.py` from the format description with Python's `json`
/// and `base64` (not from our code).
@Suite("SecureChats envelopes")
struct EnvelopeTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let name: String
        let form: OfflineEnvelope.Form
        let kind: OfflineEnvelope.Kind
        let json: String
        let envelope: OfflineEnvelope
        var testDescription: String { name }
    }

    static let vectors: [Vector] = {
        let items = OfflineVectorFile.section("vectors")
        return items.compactMap { item in
            guard let name = item["name"] as? String, let form = (item["form"] as? String).flatMap(OfflineEnvelope.Form.init),
                let kind = (item["kind"] as? String).flatMap(OfflineEnvelope.Kind.init), let json = item["json"] as? String,
                let fields = item["fields"] as? [String: Any]
            else { return nil }
            return Vector(name: name, form: form, kind: kind, json: json, envelope: envelope(fields))
        }
    }()

    private static func hex(_ value: Any?) -> [UInt8]? { (value as? String).flatMap(Hex.decode) }

    private static func envelope(_ fields: [String: Any]) -> OfflineEnvelope {
        let response = (fields["preKeyResponse"] as? [String: Any]).map { response in
            OfflineEnvelope.PreKeyResponse(
                identityKey: hex(response["identityKey"]) ?? [],
                devices: (response["devices"] as? [[String: Any]] ?? []).map { device in
                    let signed = device["signedPreKey"] as? [String: Any] ?? [:]
                    return OfflineEnvelope.Device(
                        deviceID: device["deviceId"] as? Int ?? -1,
                        preKey: (device["preKey"] as? [String: Any]).map {
                            OfflineEnvelope.PreKey(keyID: $0["keyId"] as? Int ?? -1, publicKey: hex($0["publicKey"]) ?? [])
                        },
                        registrationID: device["registrationId"] as? Int ?? -1,
                        signedPreKey: OfflineEnvelope.SignedPreKey(
                            keyID: signed["keyId"] as? Int ?? -1, publicKey: hex(signed["publicKey"]) ?? [],
                            signature: hex(signed["signature"]) ?? []))
                },
                kyberPreKeyID: response["kyberPreKeyId"] as? Int, kyberPublicKey: hex(response["kyberPubKey"]),
                kyberSignature: hex(response["kyberSignature"]))
        }
        return OfflineEnvelope(
            ciphertext: hex(fields["ciphertext"]), ciphertextType: fields["ciphertextType"] as? Int ?? -1,
            deviceID: fields["deviceId"] as? Int ?? -1, preKeyResponse: response, address: fields["address"] as? String ?? "",
            timestamp: (fields["timestamp"] as? NSNumber)?.int64Value ?? -1)
    }

    @Test("the vector file is there: invites, messages and rotations in both forms, with and without Kyber")
    func vectorFile() {
        #expect(Self.vectors.count == 9)
        #expect(Set(Self.vectors.map(\.form)) == [.android, .ios])
        #expect(Set(Self.vectors.map(\.kind)) == [.invite, .message, .rotation])
    }

    @Test("we write exactly the text an app writes", arguments: vectors)
    func writes(_ vector: Vector) {
        #expect(vector.envelope.json(vector.form) == vector.json)
    }

    @Test("we read the app's text into the same envelope, its form and kind", arguments: vectors)
    func reads(_ vector: Vector) throws {
        let (envelope, form) = try OfflineEnvelope.parse(json: Array(vector.json.utf8))
        #expect(envelope == vector.envelope)
        #expect(form == vector.form && envelope.kind == vector.kind)
        // And the other form carries the same envelope.
        let other: OfflineEnvelope.Form = vector.form == .android ? .ios : .android
        #expect(try OfflineEnvelope(json: Array(vector.envelope.json(other).utf8)) == vector.envelope)
    }

    @Test("Android: byte fields as the apps pad them; KryptEY's two-element key response; extra and missing trailing elements")
    func androidLeniency() throws {
        let invite = try #require(Self.vectors.first { $0.form == .android && $0.kind == .invite && $0.envelope.preKeyResponse?.kyberPublicKey != nil })
        // EC keys and signatures unpadded, the Kyber key and its signature padded.
        let text = invite.envelope.androidJSON()
        #expect(text.contains(#""publicKey":"BQECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g""#))
        #expect(text.contains("iImKi4yNjo+QkZKTlJWWl5iZmpucnZ6foKGiow\""))
        #expect(text.contains("==\"],"))  // the Kyber signature, last of the key response
        // Padded where the apps leave it off, and the reverse: both read.
        let padded = text.replacingOccurrences(of: "iImKi4yNjo+QkZKTlJWWl5iZmpucnZ6foKGiow\"", with: "iImKi4yNjo+QkZKTlJWWl5iZmpucnZ6foKGiow==\"")
        #expect(try OfflineEnvelope(json: Array(padded.utf8)) == invite.envelope)

        let device = #"[1,[1,"BcjJysvMzc7P0NHS09TV1tfY2drb3N3e3+Dh4uPk5ebn"],4242,[7,"BSEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj9A","ZGVm"]]"#
        let kryptey = #"[null,0,1,[["# + device + #"],{"publicKey":"BQECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g"}],"a-b",5,"extra",[1,2]]"#
        let envelope = try OfflineEnvelope(json: Array(kryptey.utf8))
        #expect(envelope.kind == .invite && envelope.address == "a-b" && envelope.timestamp == 5)
        #expect(envelope.preKeyResponse?.kyberPreKeyID == nil && envelope.preKeyResponse?.kyberPublicKey == nil)
        #expect(envelope.preKeyResponse?.devices.first?.signedPreKey.signature == [0x64, 0x65, 0x66])

        let short = try OfflineEnvelope(json: Array(#"["AAEC",2]"#.utf8))
        #expect(short.kind == .message && short.ciphertext == [0, 1, 2] && short.deviceID == 0 && short.address.isEmpty)
        #expect(try OfflineEnvelope(json: Array("[]".utf8)).kind == .notOurs)
        #expect(try OfflineEnvelope(json: Array(#"[null,0,1,null,"x",1]"#.utf8)).kind == .notOurs)
    }

    @Test("iOS: every `/` escaped, absent values left out, nulls and unknown keys read")
    func iOSForm() throws {
        let message = OfflineEnvelope(
            ciphertext: Array(0..<50), ciphertextType: 2, deviceID: 1, preKeyResponse: nil, address: "A", timestamp: 1)
        let text = message.iOSJSON()
        #expect(text == #"{"ciphertextMessage":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDE=","ciphertextType":2,"timestamp":1,"signalProtocolAddressName":"A","deviceId":1}"#
            .replacingOccurrences(of: "/", with: #"\/"#))
        let withNulls = #"{"preKeyResponse":null,"ciphertextMessage":"AAEC","other":{"x":[1]},"timestamp":2.0}"#
        let read = try OfflineEnvelope.parse(json: Array(withNulls.utf8))
        #expect(read.form == .ios && read.envelope.ciphertext == [0, 1, 2] && read.envelope.timestamp == 2)
    }

    @Test("kinds, as the apps classify them")
    func kinds() {
        let keys = OfflineEnvelope.PreKeyResponse(
            identityKey: [5], devices: [], kyberPreKeyID: nil, kyberPublicKey: nil, kyberSignature: nil)
        func kind(_ ciphertext: [UInt8]?, _ response: OfflineEnvelope.PreKeyResponse?) -> OfflineEnvelope.Kind {
            OfflineEnvelope(ciphertext: ciphertext, ciphertextType: 0, deviceID: 1, preKeyResponse: response, address: "a", timestamp: 0).kind
        }
        #expect(kind(nil, keys) == .invite && kind([1], nil) == .message && kind([1], keys) == .rotation && kind(nil, nil) == .notOurs)
    }

    @Test("malformed envelopes are refused with a typed error that quotes nothing of the input", arguments: [
        "", "not json", "42", #""text""#, "[1]", #"[null,"2"]"#, #"[null,2,1.5]"#, #"["!!!"]"#, #"["AAF"]"#, #"["A"]"#,
        #"[null,0,1,[[[1,null,2]],{"publicKey":"BQ"}]]"#, #"[null,0,1,[[],{"publicKey":"!"}]]"#, #"[null,0,1,[[],{}]]"#,
        #"[null,0,1,[[],5]]"#, #"[null,0,1,[[7],{"publicKey":"BQ"}]]"#, #"[null,0,1,{}]"#,
        #"{"preKeyResponse":{"devices":[]}}"#, #"{"preKeyResponse":{"identityKey":"BQ","devices":[{"deviceId":1}]}}"#,
        #"{"ciphertextMessage":7}"#, #"{"deviceId":"1"}"#, #"{"preKeyResponse":[]}"#, #"[null,0,1,null,"x",1e400]"#,
    ])
    func malformed(_ text: String) {
        #expect(throws: OfflineError(.malformedEnvelope)) { try OfflineEnvelope(json: Array(text.utf8)) }
        do {
            _ = try OfflineEnvelope(json: Array(text.utf8))
        } catch {
            #expect(text.count < 3 || !error.description.contains(text))
        }
    }

    @Test("an input larger than any envelope is refused before parsing")
    func tooLarge() {
        let text = "[\"" + String(repeating: "A", count: OfflineEnvelope.maxJSONByteCount) + "\"]"
        #expect(throws: OfflineError(.tooLarge)) { try OfflineEnvelope(json: Array(text.utf8)) }
    }

    @Test("the description names kind, sender and time, never key or ciphertext bytes")
    func description() throws {
        let vector = try #require(Self.vectors.first { $0.kind == .rotation })
        let text = "\(vector.envelope)"
        #expect(text.contains("rotation") && text.contains(vector.envelope.address))
        #expect(!text.contains("BQEC") && !text.contains("0102"))
    }
}
