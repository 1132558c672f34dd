public import Foundation
public import InvisoCrypto

// Our storage format (not libsignal's, which is internal to it): protobuf fields
//   SessionRecord   1 format (=1), 2 current: State, 3 previous: State (repeated, newest first)
//   State           1 version, 2 local identity (33), 3 remote identity (33), 4 root key (32),
//                   5 previous counter, 6 sender chain, 7 receiver chain (repeated, oldest first),
//                   8 pending pre-key, 9 local registration id, 10 remote registration id,
//                   11 initiator base key (33)
//   SenderChain     1 public (33), 2 private (32), 3 index, 4 chain key (32)
//   ReceiverChain   1 ratchet key (33), 2 index, 3 chain key (32), 4 message key (repeated)
//   MessageKey      1 index, 2 seed (32)
//   PendingPreKey   1 pre-key id, 2 signed pre-key id, 3 base key (33), 4 Kyber pre-key id,
//                   5 Kyber ciphertext (1568)

extension SessionRecord {
    private static let formatVersion: UInt32 = 1

    /// The record's bytes for storage. They contain private keys: keep them encrypted at rest.
    public func serialize() -> SecretBytes {
        var writer = ProtobufWriter()
        writer.writeUInt32(1, Self.formatVersion)
        if let current { writer.writeMessage(2) { current.write(to: &$0) } }
        for state in previous { writer.writeMessage(3) { state.write(to: &$0) } }
        return SecretBytes(writer.bytes)
    }

    /// Restores a record from ``serialize()`` output.
    ///
    /// - Throws: ``SignalError/invalidRecord`` for anything malformed.
    public init(serialized: some ContiguousBytes) throws(SignalError) {
        let bytes = serialized.withUnsafeBytes { Array($0) }
        var reader = ProtobufReader(bytes)
        var format: UInt32?
        var current: SessionState?
        var previous: [SessionState] = []
        do {
            while let (field, value) = try reader.next() {
                switch field {
                case 1: format = try value.uint32()
                case 2: current = try SessionState(reading: try value.slice())
                case 3: previous.append(try SessionState(reading: try value.slice()))
                default: continue
                }
            }
        } catch {
            throw SignalError(.invalidRecord, "session record")
        }
        guard format == Self.formatVersion, previous.count <= RatchetConstants.maxArchivedStates else {
            throw SignalError(.invalidRecord, "session record")
        }
        self.init(current: current, previous: previous)
    }
}

extension SessionState {
    fileprivate func write(to writer: inout ProtobufWriter) {
        writer.writeUInt32(1, UInt32(sessionVersion))
        writer.writeBytes(2, localIdentity.serialized)
        writer.writeBytes(3, remoteIdentity.serialized)
        rootKey.key.withUnsafeBytes { writer.writeBytes(4, $0) }
        writer.writeUInt32(5, previousCounter)
        writer.writeMessage(6) { chain in
            chain.writeBytes(1, senderChain.ratchetKeyPair.publicKey.serialized)
            senderChain.ratchetKeyPair.privateKey.rawRepresentation.withUnsafeBytes { chain.writeBytes(2, $0) }
            chain.writeUInt32(3, senderChain.chainKey.index)
            senderChain.chainKey.key.withUnsafeBytes { chain.writeBytes(4, $0) }
        }
        for receiver in receiverChains {
            writer.writeMessage(7) { chain in
                chain.writeBytes(1, receiver.ratchetKey.serialized)
                chain.writeUInt32(2, receiver.chainKey.index)
                receiver.chainKey.key.withUnsafeBytes { chain.writeBytes(3, $0) }
                for stored in receiver.messageKeys {
                    chain.writeMessage(4) { key in
                        key.writeUInt32(1, stored.index)
                        stored.seed.withUnsafeBytes { key.writeBytes(2, $0) }
                    }
                }
            }
        }
        if let pending = pendingPreKey {
            writer.writeMessage(8) { message in
                if let id = pending.preKeyID { message.writeUInt32(1, id) }
                message.writeUInt32(2, pending.signedPreKeyID)
                message.writeBytes(3, pending.baseKey.serialized)
                if let id = pending.kyberPreKeyID { message.writeUInt32(4, id) }
                if let ciphertext = pending.kyberCiphertext { message.writeBytes(5, ciphertext) }
            }
        }
        writer.writeUInt32(9, localRegistrationID)
        writer.writeUInt32(10, remoteRegistrationID)
        if let aliceBaseKey { writer.writeBytes(11, aliceBaseKey.serialized) }
    }

    fileprivate init(reading bytes: ArraySlice<UInt8>) throws(SignalError) {
        var reader = ProtobufReader(bytes)
        var version: UInt32?
        var local: IdentityKey?
        var remote: IdentityKey?
        var root: SecretBytes?
        var previousCounter: UInt32 = 0
        var sender: SenderChain?
        var receivers: [ReceiverChain] = []
        var pending: PendingPreKey?
        var localRegistration: UInt32 = 0
        var remoteRegistration: UInt32 = 0
        var baseKey: ECPublicKey?
        while let (field, value) = try reader.next() {
            switch field {
            case 1: version = try value.uint32()
            case 2: local = try IdentityKey(serialized: try value.slice())
            case 3: remote = try IdentityKey(serialized: try value.slice())
            case 4: root = try secret32(value)
            case 5: previousCounter = try value.uint32()
            case 6: sender = try readSenderChain(try value.slice())
            case 7: receivers.append(try readReceiverChain(try value.slice()))
            case 8: pending = try readPending(try value.slice())
            case 9: localRegistration = try value.uint32()
            case 10: remoteRegistration = try value.uint32()
            case 11: baseKey = try ECPublicKey(serialized: try value.slice())
            default: continue
            }
        }
        guard let version, version == 3 || version == 4, let local, let remote, let root, let sender,
            receivers.count <= RatchetConstants.maxReceiverChains
        else { throw SignalError(.invalidRecord) }
        self.init(
            sessionVersion: UInt8(version), localIdentity: local, remoteIdentity: remote, rootKey: RootKey(root),
            previousCounter: previousCounter, senderChain: sender, receiverChains: receivers, pendingPreKey: pending,
            localRegistrationID: localRegistration, remoteRegistrationID: remoteRegistration, aliceBaseKey: baseKey)
    }
}

private func secret32(_ value: ProtobufReader.Value) throws(SignalError) -> SecretBytes {
    let slice = try value.slice()
    guard slice.count == 32 else { throw SignalError(.invalidRecord) }
    return SecretBytes(slice)
}

private func readSenderChain(_ bytes: ArraySlice<UInt8>) throws(SignalError) -> SenderChain {
    var reader = ProtobufReader(bytes)
    var publicKey: ECPublicKey?
    var privateKey: ECPrivateKey?
    var index: UInt32 = 0
    var key: SecretBytes?
    while let (field, value) = try reader.next() {
        switch field {
        case 1: publicKey = try ECPublicKey(serialized: try value.slice())
        case 2: privateKey = try ECPrivateKey(rawRepresentation: Array(try value.slice()))
        case 3: index = try value.uint32()
        case 4: key = try secret32(value)
        default: continue
        }
    }
    guard let publicKey, let privateKey, let key, privateKey.publicKey == publicKey else { throw SignalError(.invalidRecord) }
    return SenderChain(ratchetKeyPair: ECKeyPair(privateKey: privateKey), chainKey: ChainKey(key: key, index: index))
}

private func readReceiverChain(_ bytes: ArraySlice<UInt8>) throws(SignalError) -> ReceiverChain {
    var reader = ProtobufReader(bytes)
    var ratchetKey: ECPublicKey?
    var index: UInt32 = 0
    var key: SecretBytes?
    var stored: [StoredMessageKey] = []
    while let (field, value) = try reader.next() {
        switch field {
        case 1: ratchetKey = try ECPublicKey(serialized: try value.slice())
        case 2: index = try value.uint32()
        case 3: key = try secret32(value)
        case 4:
            var inner = ProtobufReader(try value.slice())
            var keyIndex: UInt32?
            var seed: SecretBytes?
            while let (innerField, innerValue) = try inner.next() {
                switch innerField {
                case 1: keyIndex = try innerValue.uint32()
                case 2: seed = try secret32(innerValue)
                default: continue
                }
            }
            guard let keyIndex, let seed else { throw SignalError(.invalidRecord) }
            stored.append(StoredMessageKey(index: keyIndex, seed: seed))
        default: continue
        }
    }
    guard let ratchetKey, let key, stored.count <= RatchetConstants.maxMessageKeys else { throw SignalError(.invalidRecord) }
    return ReceiverChain(ratchetKey: ratchetKey, chainKey: ChainKey(key: key, index: index), messageKeys: stored)
}

private func readPending(_ bytes: ArraySlice<UInt8>) throws(SignalError) -> PendingPreKey {
    var reader = ProtobufReader(bytes)
    var preKeyID: UInt32?
    var signedPreKeyID: UInt32?
    var baseKey: ECPublicKey?
    var kyberID: UInt32?
    var kyberCiphertext: [UInt8]?
    while let (field, value) = try reader.next() {
        switch field {
        case 1: preKeyID = try value.uint32()
        case 2: signedPreKeyID = try value.uint32()
        case 3: baseKey = try ECPublicKey(serialized: try value.slice())
        case 4: kyberID = try value.uint32()
        case 5: kyberCiphertext = try value.bytes()
        default: continue
        }
    }
    guard let signedPreKeyID, let baseKey, (kyberID == nil) == (kyberCiphertext == nil),
        kyberCiphertext.map({ $0.count == Kyber1024.ciphertextByteCount }) ?? true
    else { throw SignalError(.invalidRecord) }
    return PendingPreKey(
        preKeyID: preKeyID, signedPreKeyID: signedPreKeyID, baseKey: baseKey, kyberPreKeyID: kyberID,
        kyberCiphertext: kyberCiphertext)
}
