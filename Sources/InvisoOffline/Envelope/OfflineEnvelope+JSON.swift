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

    /// The envelope's JSON in `form`, as UTF-8 bytes.
    package func jsonBytes(_ form: Form) -> [UInt8] {
        switch form {
        case .android: androidJSONBytes().bytes
        case .ios: iOSJSONBytes().bytes
        }
    }

    /// The Android form: compact, positional.
    ///
    /// Written straight into bytes (no JSON tree): every message is written once, and this
    /// is on its way to the messenger. The vector file checks it byte for byte.
    public func androidJSON() -> String { androidJSONBytes().text }

    private func androidJSONBytes() -> JSONBytes {
        var out = JSONBytes(capacity: 64 + (ciphertext?.count ?? 0) * 4 / 3 + (preKeyResponse == nil ? 0 : 2_400))
        out.raw("[")
        if let ciphertext { out.base64(ciphertext, padded: true) } else { out.raw("null") }
        out.raw(",")
        out.integer(ciphertextType)
        out.raw(",")
        out.integer(deviceID)
        out.raw(",")
        if let response = preKeyResponse {
            out.raw("[[")
            for (index, device) in response.devices.enumerated() {
                if index > 0 { out.raw(",") }
                out.raw("[")
                out.integer(device.deviceID)
                out.raw(",")
                if let preKey = device.preKey {
                    out.raw("[")
                    out.integer(preKey.keyID)
                    out.raw(",")
                    out.base64(preKey.publicKey, padded: false)
                    out.raw("]")
                } else {
                    out.raw("null")
                }
                out.raw(",")
                out.integer(device.registrationID)
                out.raw(",[")
                out.integer(device.signedPreKey.keyID)
                out.raw(",")
                out.base64(device.signedPreKey.publicKey, padded: false)
                out.raw(",")
                out.base64(device.signedPreKey.signature, padded: false)
                out.raw("]]")
            }
            out.raw("],{\"publicKey\":")
            out.base64(response.identityKey, padded: false)
            out.raw("},")
            if let id = response.kyberPreKeyID { out.integer(id) } else { out.raw("null") }
            out.raw(",")
            if let key = response.kyberPublicKey { out.base64(key, padded: true) } else { out.raw("null") }
            out.raw(",")
            if let signature = response.kyberSignature { out.base64(signature, padded: true) } else { out.raw("null") }
            out.raw("]")
        } else {
            out.raw("null")
        }
        out.raw(",")
        out.string(address)
        out.raw(",")
        out.integer64(timestamp)
        out.raw("]")
        return out
    }

    /// The iOS form: compact, keyed, absent values left out, `/` escaped as `\/` (Apple's
    /// `JSONEncoder`), keys in the port's order.
    public func iOSJSON() -> String { iOSJSONBytes().text }

    private func iOSJSONBytes() -> JSONBytes {
        var out = JSONBytes(capacity: 160 + (ciphertext?.count ?? 0) * 4 / 3 + (preKeyResponse == nil ? 0 : 2_600), escapeSlashes: true)
        out.raw("{")
        if let response = preKeyResponse {
            out.raw("\"preKeyResponse\":{\"identityKey\":")
            out.base64(response.identityKey, padded: true)
            out.raw(",\"devices\":[")
            for (index, device) in response.devices.enumerated() {
                if index > 0 { out.raw(",") }
                out.raw("{\"deviceId\":")
                out.integer(device.deviceID)
                out.raw(",\"registrationId\":")
                out.integer(device.registrationID)
                out.raw(",\"signedPreKey\":{\"keyId\":")
                out.integer(device.signedPreKey.keyID)
                out.raw(",\"publicKey\":")
                out.base64(device.signedPreKey.publicKey, padded: true)
                out.raw(",\"signature\":")
                out.base64(device.signedPreKey.signature, padded: true)
                out.raw("}")
                if let preKey = device.preKey {
                    out.raw(",\"preKey\":{\"keyId\":")
                    out.integer(preKey.keyID)
                    out.raw(",\"publicKey\":")
                    out.base64(preKey.publicKey, padded: true)
                    out.raw("}")
                }
                out.raw("}")
            }
            out.raw("]")
            if let key = response.kyberPublicKey {
                out.raw(",\"kyberPubKey\":")
                out.base64(key, padded: true)
            }
            if let id = response.kyberPreKeyID {
                out.raw(",\"kyberPreKeyId\":")
                out.integer(id)
            }
            if let signature = response.kyberSignature {
                out.raw(",\"kyberSignature\":")
                out.base64(signature, padded: true)
            }
            out.raw("},")
        }
        if let ciphertext {
            out.raw("\"ciphertextMessage\":")
            out.base64(ciphertext, padded: true)
            out.raw(",")
        }
        out.raw("\"ciphertextType\":")
        out.integer(ciphertextType)
        out.raw(",\"timestamp\":")
        out.integer64(timestamp)
        out.raw(",\"signalProtocolAddressName\":")
        out.string(address)
        out.raw(",\"deviceId\":")
        out.integer(deviceID)
        out.raw("}")
        return out
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

/// Reading base64 as the envelopes use it: standard alphabet, padded or not (writing is
/// ``JSONBytes/base64(_:padded:)``).
enum EnvelopeBase64 {
    /// Decodes canonical base64 with or without its padding; `nil` for anything else.
    static func decode(_ text: String) -> [UInt8]? {
        decode(bytes: Array(text.utf8))
    }

    /// ``decode(_:)`` over the text's UTF-8.
    static func decode(bytes: [UInt8]) -> [UInt8]? {
        var bytes = bytes
        switch bytes.count % 4 {
        case 0: break
        case 2: bytes += [UInt8(ascii: "="), UInt8(ascii: "=")]
        case 3: bytes.append(UInt8(ascii: "="))
        default: return nil
        }
        return Base64.decode(bytes)
    }
}

/// JSON text written straight into bytes: literal pieces, integers, base64 strings (which
/// need no escaping but `/` in the iOS form) and escaped strings.
struct JSONBytes {
    private(set) var bytes: [UInt8] = []
    let escapeSlashes: Bool

    init(capacity: Int, escapeSlashes: Bool = false) {
        bytes.reserveCapacity(capacity)
        self.escapeSlashes = escapeSlashes
    }

    /// A literal piece of JSON (ASCII, written as is).
    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func integer(_ value: Int) { bytes.append(contentsOf: String(value).utf8) }

    mutating func integer64(_ value: Int64) { bytes.append(contentsOf: String(value).utf8) }

    /// `"base64"`, padded or not; `/` as `\/` when escaping slashes.
    mutating func base64(_ data: [UInt8], padded: Bool) {
        bytes.append(UInt8(ascii: "\""))
        let start = bytes.count
        Base64.encode(data, into: &bytes)
        if !padded {
            while bytes.count > start, bytes.last == UInt8(ascii: "=") { bytes.removeLast() }
        }
        if escapeSlashes, bytes[start...].contains(UInt8(ascii: "/")) {
            let encoded = Array(bytes[start...])
            bytes.removeSubrange(start...)
            for byte in encoded {
                if byte == UInt8(ascii: "/") { bytes.append(UInt8(ascii: "\\")) }
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A string, escaped as JSON requires (and `/` as `\/` when escaping slashes).
    mutating func string(_ value: String) {
        let escaped = JSONValue.string(value).jsonText
        for byte in escaped.utf8 {
            if escapeSlashes, byte == UInt8(ascii: "/") { bytes.append(UInt8(ascii: "\\")) }
            bytes.append(byte)
        }
    }

    var text: String { String(decoding: bytes, as: UTF8.self) }
}
