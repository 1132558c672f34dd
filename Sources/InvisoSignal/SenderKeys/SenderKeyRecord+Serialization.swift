public import InvisoCrypto

/// The stored form of a ``SenderKeyRecord`` (ours, laid out like libsignal's
/// `SenderKeyRecordStructure`; written with ``ProtobufWriter``, fields in ascending order):
///
///     SenderKeyRecord { repeated State states = 1 }            // newest first
///     State {
///         uint32 chain_id = 1
///         ChainKey chain_key = 2       { uint32 iteration = 1; bytes seed = 2 (32) }
///         SigningKey signing_key = 3   { bytes public = 1 (33); bytes private = 2 (32, optional) }
///         repeated MessageKey message_keys = 4 { uint32 iteration = 1; bytes seed = 2 (32) }
///         uint32 message_version = 5   // 3
///     }
extension SenderKeyRecord {
    /// The record's stored form. It holds chain keys and possibly a private signing key, so
    /// it is returned as ``SecretBytes``; the encoder's buffers are wiped (best effort).
    public func serialize() -> SecretBytes {
        var writer = ProtobufWriter()
        for state in states {
            var stateWriter = ProtobufWriter()
            stateWriter.writeUInt32(1, state.chainID)
            Self.writeKey(&stateWriter, field: 2, iteration: state.chainKey.iteration, seed: state.chainKey.seed)
            var signing = ProtobufWriter()
            signing.writeBytes(1, state.signingKey.serialized)
            if let privateKey = state.signingPrivateKey {
                privateKey.rawRepresentation.withUnsafeBytes { signing.writeBytes(2, $0) }
            }
            stateWriter.writeBytes(3, signing.bytes)
            Self.wipe(&signing)
            for key in state.messageKeys {
                Self.writeKey(&stateWriter, field: 4, iteration: key.iteration, seed: key.seed)
            }
            stateWriter.writeUInt32(5, UInt32(state.messageVersion))
            writer.writeBytes(1, stateWriter.bytes)
            Self.wipe(&stateWriter)
        }
        let result = SecretBytes(writer.bytes)
        Self.wipe(&writer)
        return result
    }

    /// Restores a record from ``serialize()``'s output.
    ///
    /// - Throws: ``SignalError/invalidRecord`` for anything that is not exactly a record
    ///   this library could have written (see ``init(serialized:)-(some Collection<UInt8>)``).
    public init(serialized: SecretBytes) throws(SignalError) {
        var bytes = serialized.withUnsafeBytes { Array($0) }
        defer { SecureWipe.wipe(&bytes) }
        self = try Self.decode(bytes)
    }

    /// Restores a record from the bytes of ``serialize()``'s output.
    ///
    /// Validation is strict: malformed protobuf, unknown or repeated singular fields, a
    /// missing field, more than ``maxStates`` states, two states with one chain id, a
    /// message version other than 3, keys of the wrong length, a private signing key that
    /// does not match the public one, more than ``SenderKeyState/maxMessageKeys`` stored
    /// keys, or stored keys that are not in increasing order below the chain's iteration.
    ///
    /// - Throws: ``SignalError/invalidRecord`` for any of these.
    public init(serialized: some Collection<UInt8>) throws(SignalError) {
        var bytes = Array(serialized)
        defer { SecureWipe.wipe(&bytes) }
        self = try Self.decode(bytes)
    }

    // MARK: Encoding helpers

    private static func writeKey(_ writer: inout ProtobufWriter, field: UInt32, iteration: UInt32, seed: SecretBytes) {
        var inner = ProtobufWriter()
        inner.writeUInt32(1, iteration)
        seed.withUnsafeBytes { inner.writeBytes(2, $0) }
        writer.writeBytes(field, inner.bytes)
        wipe(&inner)
    }

    /// Zeroes a writer's buffer: once the writer is reset, the copy is the buffer's only
    /// owner, so the wipe happens in place.
    private static func wipe(_ writer: inout ProtobufWriter) {
        var bytes = writer.bytes
        writer = ProtobufWriter()
        SecureWipe.wipe(&bytes)
    }

    // MARK: Decoding

    private static func decode(_ bytes: [UInt8]) throws(SignalError) -> SenderKeyRecord {
        let fields = try Fields(bytes[...], singular: [], repeated: [1])
        let encodedStates = fields.repeated[1] ?? []
        guard encodedStates.count <= maxStates else { throw invalid("too many states") }
        var record = SenderKeyRecord()
        for encoded in encodedStates {
            let state = try decodeState(encoded)
            guard record.stateIndex(forChainID: state.chainID) == nil else { throw invalid("duplicate chain id") }
            record.states.append(state)
        }
        return record
    }

    private static func decodeState(_ bytes: ArraySlice<UInt8>) throws(SignalError) -> SenderKeyState {
        let fields = try Fields(bytes, singular: [1, 2, 3, 5], repeated: [4])
        let chainID = try fields.uint32(1)
        let version = try fields.uint32(5)
        guard version == UInt32(SenderKeyMessage.currentVersion) else { throw invalid("message version") }
        let chainKey = try decodeKey(fields.message(2))

        let signing = try Fields(fields.message(3), singular: [1, 2], repeated: [])
        let signingKey: ECPublicKey
        do {
            signingKey = try ECPublicKey(serialized: signing.bytes(1))
        } catch {
            throw invalid("signing key")
        }
        var privateKey: ECPrivateKey?
        if signing.singular[2] != nil {
            let raw = try signing.bytes(2)
            guard raw.count == 32, let key = try? ECPrivateKey(rawRepresentation: Array(raw)) else {
                throw invalid("private signing key")
            }
            guard key.publicKey == signingKey else { throw invalid("private signing key does not match") }
            privateKey = key
        }

        let encodedKeys = fields.repeated[4] ?? []
        guard encodedKeys.count <= SenderKeyState.maxMessageKeys else { throw invalid("too many message keys") }
        var messageKeys: [SenderMessageKey] = []
        messageKeys.reserveCapacity(encodedKeys.count)
        for encoded in encodedKeys {
            let key = try decodeKey(encoded)
            guard key.iteration < chainKey.iteration, messageKeys.last.map({ $0.iteration < key.iteration }) ?? true
            else { throw invalid("message key order") }
            messageKeys.append(SenderMessageKey(iteration: key.iteration, seed: key.seed))
        }
        return SenderKeyState(
            messageVersion: UInt8(version), chainID: chainID, chainKey: chainKey, signingKey: signingKey,
            signingPrivateKey: privateKey, messageKeys: messageKeys)
    }

    private static func decodeKey(_ bytes: ArraySlice<UInt8>) throws(SignalError) -> SenderChainKey {
        let fields = try Fields(bytes, singular: [1, 2], repeated: [])
        let iteration = try fields.uint32(1)
        let seed = try fields.bytes(2)
        guard seed.count == 32 else { throw invalid("key length") }
        return SenderChainKey(iteration: iteration, seed: SecretBytes(seed))
    }

    private static func invalid(_ detail: String) -> SignalError {
        SignalError(.invalidRecord, "sender key record: \(detail)")
    }

    /// The fields of one message, checked against the allowed field numbers.
    private struct Fields {
        var singular: [UInt32: ProtobufReader.Value] = [:]
        var repeated: [UInt32: [ArraySlice<UInt8>]] = [:]

        /// Reads every field; unknown fields, repeated singular fields and malformed
        /// input are errors. Repeated fields must be embedded messages.
        init(
            _ bytes: ArraySlice<UInt8>, singular allowedSingular: Set<UInt32>, repeated allowedRepeated: Set<UInt32>
        )
            throws(SignalError)
        {
            var reader = ProtobufReader(bytes)
            while true {
                let next: (field: UInt32, value: ProtobufReader.Value)?
                do {
                    next = try reader.next()
                } catch {
                    throw invalid("malformed protobuf")
                }
                guard let next else { break }
                if allowedSingular.contains(next.field) {
                    guard singular.updateValue(next.value, forKey: next.field) == nil else {
                        throw invalid("repeated field \(next.field)")
                    }
                } else if allowedRepeated.contains(next.field) {
                    guard case .bytes(let value) = next.value else { throw invalid("field \(next.field) type") }
                    repeated[next.field, default: []].append(value)
                } else {
                    throw invalid("unknown field \(next.field)")
                }
            }
        }

        func uint32(_ field: UInt32) throws(SignalError) -> UInt32 {
            guard let value = singular[field], let number = try? value.uint32() else {
                throw invalid("field \(field) missing or not uint32")
            }
            return number
        }

        func bytes(_ field: UInt32) throws(SignalError) -> ArraySlice<UInt8> {
            guard let value = singular[field], let bytes = try? value.slice() else {
                throw invalid("field \(field) missing or not bytes")
            }
            return bytes
        }

        func message(_ field: UInt32) throws(SignalError) -> ArraySlice<UInt8> {
            try bytes(field)
        }
    }
}
