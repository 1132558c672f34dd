import InvisoCrypto
import InvisoWire

// The two JSON forms of an envelope (`../shared/docs/SECURECHATS.md`):
//
// Android (Jackson, shape = ARRAY), positional, `null` for absent values:
//   [ciphertextMessage, ciphertextType, deviceId, preKeyResponse, signalProtocolAddressName, timestamp]
//   preKeyResponse = [devices, {"publicKey": identityKey}, kyberPreKeyId, kyberPubKey, kyberSignature]
//   device = [deviceId, preKey, registrationId, signedPreKey]
//   preKey = [keyId, publicKey]; signedPreKey = [keyId, publicKey, signature]
//   base64 padded: ciphertext, Kyber key and signature; unpadded: EC keys, EC signatures,
//   the identity key. Readers ignore extra trailing elements and default missing ones
//   (KryptEY's pre-key response is [devices, identityKey]).
//
// iOS (Codable), keyed, absent values omitted, every byte field padded base64, `/` as `\/`:
//   {"preKeyResponse":{"identityKey","devices":[{"deviceId","registrationId","signedPreKey":
//   {"keyId","publicKey","signature"},"preKey":{"keyId","publicKey"}}],"kyberPubKey",
//   "kyberPreKeyId","kyberSignature"},"ciphertextMessage","ciphertextType","timestamp",
//   "signalProtocolAddressName","deviceId"}

extension OfflineEnvelope {
    /// Which JSON form an envelope is written in.
    public enum Form: String, Sendable, Hashable, CaseIterable {
        /// The Android apps' and KryptEY's positional arrays (what we write by default).
        case android
        /// The iOS port's keyed objects.
        case ios
    }

    /// The largest envelope text read: a rotation with a Kyber key and a 10,000-byte
    /// message is about 20 KB.
    public static let maxJSONByteCount = 256 * 1024

    /// Reads an envelope in either form.
    ///
    /// - Throws: ``OfflineError/Code/tooLarge``, ``OfflineError/Code/malformedEnvelope``.
    public init(json: some Collection<UInt8>) throws(OfflineError) {
        self = try Self.parse(json: json).envelope
    }

    /// Reads an envelope in either form and says which form it was.
    ///
    /// - Throws: ``OfflineError/Code/tooLarge``, ``OfflineError/Code/malformedEnvelope``.
    public static func parse(json: some Collection<UInt8>) throws(OfflineError) -> (envelope: OfflineEnvelope, form: Form) {
        guard json.count <= maxJSONByteCount else { throw OfflineError(.tooLarge, "envelope") }
        let value: JSONValue
        do {
            value = try JSONValue.parse(json)
        } catch {
            throw .malformed("not JSON")
        }
        switch value {
        case .array(let elements): return (try readAndroid(elements), .android)
        case .object(let object): return (try readIOS(object), .ios)
        default: throw .malformed("neither an array nor an object")
        }
    }

    /// The envelope as JSON text in `form`.
    public func json(_ form: Form) -> String {
        switch form {
        case .android: androidJSON()
        case .ios: iOSJSON()
        }
    }

    /// The Android form: compact, positional.
    public func androidJSON() -> String {
        let response: JSONValue = preKeyResponse.map { response in
            .array([
                .array(response.devices.map { device in
                    .array([
                        .integer(device.deviceID),
                        device.preKey.map { .array([.integer($0.keyID), .string(EnvelopeBase64.unpadded($0.publicKey))]) }
                            ?? .null,
                        .integer(device.registrationID),
                        .array([
                            .integer(device.signedPreKey.keyID), .string(EnvelopeBase64.unpadded(device.signedPreKey.publicKey)),
                            .string(EnvelopeBase64.unpadded(device.signedPreKey.signature)),
                        ]),
                    ])
                }),
                .object(JSONObject([("publicKey", .string(EnvelopeBase64.unpadded(response.identityKey)))])),
                response.kyberPreKeyID.map(JSONValue.integer) ?? .null,
                response.kyberPublicKey.map { .string(EnvelopeBase64.padded($0)) } ?? .null,
                response.kyberSignature.map { .string(EnvelopeBase64.padded($0)) } ?? .null,
            ])
        } ?? .null
        return JSONValue.array([
            ciphertext.map { .string(EnvelopeBase64.padded($0)) } ?? .null,
            .integer(ciphertextType),
            .integer(deviceID),
            response,
            .string(address),
            .number(String(timestamp)),
        ]).jsonText
    }

    /// The iOS form: compact, keyed, absent values left out, `/` escaped as `\/`.
    public func iOSJSON() -> String {
        var fields: [(String, JSONValue)] = []
        if let response = preKeyResponse {
            var responseFields: [(String, JSONValue)] = [
                ("identityKey", .string(EnvelopeBase64.padded(response.identityKey))),
                ("devices", .array(response.devices.map { device in
                    var deviceFields: [(String, JSONValue)] = [
                        ("deviceId", .integer(device.deviceID)),
                        ("registrationId", .integer(device.registrationID)),
                        ("signedPreKey", .object(JSONObject([
                            ("keyId", .integer(device.signedPreKey.keyID)),
                            ("publicKey", .string(EnvelopeBase64.padded(device.signedPreKey.publicKey))),
                            ("signature", .string(EnvelopeBase64.padded(device.signedPreKey.signature))),
                        ]))),
                    ]
                    if let preKey = device.preKey {
                        deviceFields.append(("preKey", .object(JSONObject([
                            ("keyId", .integer(preKey.keyID)), ("publicKey", .string(EnvelopeBase64.padded(preKey.publicKey))),
                        ]))))
                    }
                    return .object(JSONObject(deviceFields))
                })),
            ]
            if let key = response.kyberPublicKey { responseFields.append(("kyberPubKey", .string(EnvelopeBase64.padded(key)))) }
            if let id = response.kyberPreKeyID { responseFields.append(("kyberPreKeyId", .integer(id))) }
            if let signature = response.kyberSignature {
                responseFields.append(("kyberSignature", .string(EnvelopeBase64.padded(signature))))
            }
            fields.append(("preKeyResponse", .object(JSONObject(responseFields))))
        }
        if let ciphertext { fields.append(("ciphertextMessage", .string(EnvelopeBase64.padded(ciphertext)))) }
        fields += [
            ("ciphertextType", .integer(ciphertextType)),
            ("timestamp", .number(String(timestamp))),
            ("signalProtocolAddressName", .string(address)),
            ("deviceId", .integer(deviceID)),
        ]
        // `/` occurs only inside strings (base64), so escaping every one is exact.
        return JSONValue.object(JSONObject(fields)).jsonText.replacingSlashes()
    }

    // MARK: - Reading the Android form

    private static func readAndroid(_ elements: [JSONValue]) throws(OfflineError) -> OfflineEnvelope {
        let fields = Positional(elements)
        return OfflineEnvelope(
            ciphertext: try fields.bytes(0, "ciphertextMessage"),
            ciphertextType: try fields.integer(1, "ciphertextType") ?? 0,
            deviceID: try fields.integer(2, "deviceId") ?? 0,
            preKeyResponse: try fields.array(3, "preKeyResponse").map { (response) throws(OfflineError) in
                try readAndroidResponse(Positional(response))
            },
            address: try fields.string(4, "signalProtocolAddressName") ?? "",
            timestamp: Int64(try fields.integer(5, "timestamp") ?? 0))
    }

    private static func readAndroidResponse(_ fields: Positional) throws(OfflineError) -> PreKeyResponse {
        var devices: [Device] = []
        for element in try fields.array(0, "devices") ?? [] {
            guard case .array(let device) = element else { throw .malformed("device") }
            devices.append(try readAndroidDevice(Positional(device)))
        }
        // `{"publicKey": …}`; a bare string is read too.
        let identityKey: [UInt8]
        switch fields[1] {
        case .object(let object):
            guard let text = object["publicKey"]?.stringValue, let bytes = EnvelopeBase64.decode(text) else {
                throw .malformed("identityKey")
            }
            identityKey = bytes
        case .string(let text):
            guard let bytes = EnvelopeBase64.decode(text) else { throw .malformed("identityKey") }
            identityKey = bytes
        default:
            throw .malformed("identityKey")
        }
        return PreKeyResponse(
            identityKey: identityKey, devices: devices, kyberPreKeyID: try fields.integer(2, "kyberPreKeyId"),
            kyberPublicKey: try fields.bytes(3, "kyberPubKey"), kyberSignature: try fields.bytes(4, "kyberSignature"))
    }

    private static func readAndroidDevice(_ fields: Positional) throws(OfflineError) -> Device {
        let preKey = try fields.array(1, "preKey").map { (element) throws(OfflineError) -> PreKey in
            let key = Positional(element)
            guard let publicKey = try key.bytes(1, "preKey.publicKey") else { throw .malformed("preKey.publicKey") }
            return PreKey(keyID: try key.integer(0, "preKey.keyId") ?? 0, publicKey: publicKey)
        }
        guard let signed = try fields.array(3, "signedPreKey").map(Positional.init) else { throw .malformed("signedPreKey") }
        guard let signedKey = try signed.bytes(1, "signedPreKey.publicKey") else { throw .malformed("signedPreKey.publicKey") }
        return Device(
            deviceID: try fields.integer(0, "deviceId") ?? 0, preKey: preKey,
            registrationID: try fields.integer(2, "registrationId") ?? 0,
            signedPreKey: SignedPreKey(
                keyID: try signed.integer(0, "signedPreKey.keyId") ?? 0, publicKey: signedKey,
                signature: try signed.bytes(2, "signedPreKey.signature") ?? []))
    }

    // MARK: - Reading the iOS form

    private static func readIOS(_ object: JSONObject) throws(OfflineError) -> OfflineEnvelope {
        let fields = Keyed(object)
        return OfflineEnvelope(
            ciphertext: try fields.bytes("ciphertextMessage"),
            ciphertextType: try fields.integer("ciphertextType") ?? 0,
            deviceID: try fields.integer("deviceId") ?? 0,
            preKeyResponse: try fields.object("preKeyResponse").map { (response) throws(OfflineError) in
                try readIOSResponse(Keyed(response))
            },
            address: try fields.string("signalProtocolAddressName") ?? "",
            timestamp: Int64(try fields.integer("timestamp") ?? 0))
    }

    private static func readIOSResponse(_ fields: Keyed) throws(OfflineError) -> PreKeyResponse {
        guard let identityKey = try fields.bytes("identityKey") else { throw .malformed("identityKey") }
        var devices: [Device] = []
        for element in try fields.array("devices") ?? [] {
            guard case .object(let object) = element else { throw .malformed("device") }
            let device = Keyed(object)
            guard let signed = try device.object("signedPreKey").map(Keyed.init),
                let signedKey = try signed.bytes("publicKey")
            else { throw .malformed("signedPreKey") }
            let preKey = try device.object("preKey").map { (object) throws(OfflineError) -> PreKey in
                let key = Keyed(object)
                guard let publicKey = try key.bytes("publicKey") else { throw .malformed("preKey.publicKey") }
                return PreKey(keyID: try key.integer("keyId") ?? 0, publicKey: publicKey)
            }
            devices.append(Device(
                deviceID: try device.integer("deviceId") ?? 0, preKey: preKey,
                registrationID: try device.integer("registrationId") ?? 0,
                signedPreKey: SignedPreKey(
                    keyID: try signed.integer("keyId") ?? 0, publicKey: signedKey,
                    signature: try signed.bytes("signature") ?? [])))
        }
        return PreKeyResponse(
            identityKey: identityKey, devices: devices, kyberPreKeyID: try fields.integer("kyberPreKeyId"),
            kyberPublicKey: try fields.bytes("kyberPubKey"), kyberSignature: try fields.bytes("kyberSignature"))
    }
}

// MARK: - Field access

/// Positional fields: a missing trailing element reads as `null`.
private struct Positional {
    let elements: [JSONValue]
    init(_ elements: [JSONValue]) { self.elements = elements }

    subscript(index: Int) -> JSONValue { index < elements.count ? elements[index] : .null }

    func integer(_ index: Int, _ name: String) throws(OfflineError) -> Int? { try FieldValue.integer(self[index], name) }
    func string(_ index: Int, _ name: String) throws(OfflineError) -> String? { try FieldValue.string(self[index], name) }
    func bytes(_ index: Int, _ name: String) throws(OfflineError) -> [UInt8]? { try FieldValue.bytes(self[index], name) }
    func array(_ index: Int, _ name: String) throws(OfflineError) -> [JSONValue]? { try FieldValue.array(self[index], name) }
}

/// Keyed fields: an absent key reads as `null`.
private struct Keyed {
    let object: JSONObject
    init(_ object: JSONObject) { self.object = object }

    func integer(_ key: String) throws(OfflineError) -> Int? { try FieldValue.integer(object[key] ?? .null, key) }
    func string(_ key: String) throws(OfflineError) -> String? { try FieldValue.string(object[key] ?? .null, key) }
    func bytes(_ key: String) throws(OfflineError) -> [UInt8]? { try FieldValue.bytes(object[key] ?? .null, key) }
    func array(_ key: String) throws(OfflineError) -> [JSONValue]? { try FieldValue.array(object[key] ?? .null, key) }
    func object(_ key: String) throws(OfflineError) -> JSONObject? {
        switch object[key] ?? .null {
        case .null: return nil
        case .object(let value): return value
        default: throw .malformed(key)
        }
    }
}

/// One field's value: `null` is `nil`, a value of another type is an error.
private enum FieldValue {
    static func integer(_ value: JSONValue, _ name: String) throws(OfflineError) -> Int? {
        if case .null = value { return nil }
        guard let integer = value.integerValue else { throw .malformed(name) }
        return integer
    }

    static func string(_ value: JSONValue, _ name: String) throws(OfflineError) -> String? {
        switch value {
        case .null: return nil
        case .string(let text): return text
        default: throw .malformed(name)
        }
    }

    static func bytes(_ value: JSONValue, _ name: String) throws(OfflineError) -> [UInt8]? {
        guard let text = try string(value, name) else { return nil }
        guard let bytes = EnvelopeBase64.decode(text) else { throw .malformed(name) }
        return bytes
    }

    static func array(_ value: JSONValue, _ name: String) throws(OfflineError) -> [JSONValue]? {
        switch value {
        case .null: return nil
        case .array(let elements): return elements
        default: throw .malformed(name)
        }
    }
}

/// Base64 as the envelopes use it: standard alphabet, padded or not.
enum EnvelopeBase64 {
    /// With `=` padding.
    static func padded(_ bytes: [UInt8]) -> String { Base64.encodeString(bytes) }

    /// Without padding.
    static func unpadded(_ bytes: [UInt8]) -> String {
        var text = Base64.encode(bytes)
        while text.last == UInt8(ascii: "=") { text.removeLast() }
        return String(decoding: text, as: UTF8.self)
    }

    /// Decodes canonical base64 with or without its padding; `nil` for anything else.
    static func decode(_ text: String) -> [UInt8]? {
        var bytes = Array(text.utf8)
        switch bytes.count % 4 {
        case 0: break
        case 2: bytes += [UInt8(ascii: "="), UInt8(ascii: "=")]
        case 3: bytes.append(UInt8(ascii: "="))
        default: return nil
        }
        return Base64.decode(bytes)
    }
}

extension String {
    /// Every `/` as `\/` (the iOS port's `JSONEncoder` output).
    fileprivate func replacingSlashes() -> String {
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count + 16)
        for byte in utf8 {
            if byte == UInt8(ascii: "/") { out.append(UInt8(ascii: "\\")) }
            out.append(byte)
        }
        return String(decoding: out, as: UTF8.self)
    }
}
