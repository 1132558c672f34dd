import Crypto
import Foundation

/// Seals and opens the store's values with AES-256-GCM.
///
/// A sealed value is `format (1 byte, 0x01) ‖ nonce (12) ‖ ciphertext ‖ tag (16)`; the
/// associated data is the value's ``RowBinding`` (which includes the format byte). Nonces
/// are random: the store seals far fewer than the 2^32 values under one key that random
/// 96-bit nonces allow, and a row has no counter to derive one from. Drawing one costs about
/// 1 µs here, next to milliseconds for the SQLite write.
struct RowSealer: Sendable {
    static let format: UInt8 = 1
    /// The smallest sealed value: format, nonce and tag around an empty plaintext.
    static let overhead = 1 + 12 + 16

    private let key: SymmetricKey

    init(key: SymmetricKey) { self.key = key }

    /// Seals `plaintext` for `binding`.
    func seal(_ plaintext: some DataProtocol, for binding: RowBinding) throws(StoreError) -> Data {
        do {
            let box = try AES.GCM.seal(plaintext, using: key, authenticating: binding.associatedData(format: Self.format))
            var sealed = Data([Self.format])
            box.nonce.withUnsafeBytes { sealed.append(contentsOf: $0) }
            sealed.append(box.ciphertext)
            sealed.append(box.tag)
            return sealed
        } catch {
            throw StoreError(.corrupt, "sealing \(binding.table).\(binding.column)")
        }
    }

    /// Opens `sealed`, which must have been sealed for `binding` under this key.
    ///
    /// - Throws: ``StoreError/Code/authenticationFailed`` for anything else (wrong length or
    ///   format, another row's value, another key, a flipped bit).
    func open(_ sealed: Data, for binding: RowBinding) throws(StoreError) -> Data {
        let failure = StoreError(.authenticationFailed, "opening \(binding.table).\(binding.column)")
        let bytes = [UInt8](sealed)
        guard bytes.count >= Self.overhead, bytes[0] == Self.format else { throw failure }
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: bytes[1..<13]),
                ciphertext: bytes[13..<(bytes.count - 16)],
                tag: bytes[(bytes.count - 16)...]
            )
            return try AES.GCM.open(box, using: key, authenticating: binding.associatedData(format: Self.format))
        } catch {
            throw failure
        }
    }
}

// MARK: - Codable values

extension RowSealer {
    /// Seals the JSON encoding of `value`; the encoding is overwritten once sealed (copies
    /// the encoder made internally are beyond reach).
    func seal(json value: some Encodable, for binding: RowBinding) throws(StoreError) -> Data {
        var plaintext: Data
        do {
            plaintext = try JSONEncoder().encode(value)
        } catch {
            throw StoreError(.corrupt, "encoding \(binding.table).\(binding.column)")
        }
        defer { plaintext.resetBytes(in: 0..<plaintext.count) }
        return try seal(plaintext, for: binding)
    }

    /// Opens `sealed` and decodes its JSON as `type`.
    ///
    /// - Throws: ``StoreError/Code/authenticationFailed`` when it does not open;
    ///   ``StoreError/Code/corrupt`` when it opens but does not decode.
    func open<Value: Decodable>(_ type: Value.Type, from sealed: Data, for binding: RowBinding) throws(StoreError) -> Value {
        var plaintext = try open(sealed, for: binding)
        defer { plaintext.resetBytes(in: 0..<plaintext.count) }
        do {
            return try JSONDecoder().decode(type, from: plaintext)
        } catch {
            throw StoreError(.corrupt, "decoding \(binding.table).\(binding.column)")
        }
    }
}
