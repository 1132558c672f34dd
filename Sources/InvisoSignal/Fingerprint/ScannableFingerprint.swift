import InvisoCrypto

/// The QR-code form of a safety number, as libsignal encodes it.
///
/// Protobuf `CombinedFingerprints { 1: version; 2: local_fingerprint { 1: content };
/// 3: remote_fingerprint { 1: content } }`, where each content is the first 32 bytes of a
/// side's fingerprint hash, serialized from the owner's perspective (its own hash first).
public struct ScannableFingerprint: Sendable, Hashable {
    /// The length of each side's content.
    public static let contentByteCount = 32

    /// The fingerprint version (1 or 2).
    public let version: UInt32
    /// The first 32 bytes of our own fingerprint hash.
    public let localFingerprint: [UInt8]
    /// The first 32 bytes of the peer's fingerprint hash.
    public let remoteFingerprint: [UInt8]

    /// Wraps the two sides' contents.
    ///
    /// - Parameters:
    ///   - version: The fingerprint version.
    ///   - localFingerprint: Our 32-byte content.
    ///   - remoteFingerprint: The peer's 32-byte content.
    /// - Throws: ``SignalError/invalidArgument`` when a content is not 32 bytes.
    public init(version: UInt32, localFingerprint: [UInt8], remoteFingerprint: [UInt8]) throws(SignalError) {
        guard localFingerprint.count == Self.contentByteCount, remoteFingerprint.count == Self.contentByteCount else {
            throw SignalError(.invalidArgument, "scannable fingerprint contents must be 32 bytes")
        }
        self.version = version
        self.localFingerprint = localFingerprint
        self.remoteFingerprint = remoteFingerprint
    }

    /// The protobuf bytes to put in the QR code.
    public var serialized: [UInt8] {
        var writer = ProtobufWriter()
        writer.writeUInt32(1, version)
        writer.writeMessage(2) { $0.writeBytes(1, localFingerprint) }
        writer.writeMessage(3) { $0.writeBytes(1, remoteFingerprint) }
        return writer.bytes
    }

    /// Compares with the peer's scanned fingerprint, as libsignal does: the versions must
    /// match; then the peer's local content must equal our remote one and the peer's
    /// remote content our local one (constant-time comparisons). A content of another
    /// length simply does not match.
    ///
    /// - Parameter scanned: The bytes read from the peer's QR code.
    /// - Returns: Whether both parties see the same identities.
    /// - Throws: ``SignalError/fingerprintParsingError`` when the bytes are not a
    ///   `CombinedFingerprints` with both contents; ``SignalError/fingerprintVersionMismatch``
    ///   when the peer's version (0 when absent) differs from ours.
    public func compare(with scanned: some Collection<UInt8>) throws(SignalError) -> Bool {
        let bytes = Array(scanned)
        var theirVersion: UInt32?
        var theirLocal: ArraySlice<UInt8>?
        var theirRemote: ArraySlice<UInt8>?
        do {
            var reader = ProtobufReader(bytes[...])
            while let field = try reader.next() {
                switch field.field {
                case 1: theirVersion = try field.value.uint32()
                case 2: theirLocal = try Self.content(of: field.value.slice())
                case 3: theirRemote = try Self.content(of: field.value.slice())
                default: continue
                }
            }
        } catch {
            throw SignalError(.fingerprintParsingError)
        }
        let version = theirVersion ?? 0
        guard version == self.version else {
            throw SignalError(.fingerprintVersionMismatch, "theirs \(version), ours \(self.version)")
        }
        guard let theirLocal, let theirRemote else { throw SignalError(.fingerprintParsingError) }
        let sameRemote = ConstantTime.equals(theirLocal, remoteFingerprint)
        let sameLocal = ConstantTime.equals(theirRemote, localFingerprint)
        return sameRemote && sameLocal
    }

    /// The `content` field of a `LogicalFingerprint`; missing content is a parsing error.
    private static func content(of message: ArraySlice<UInt8>) throws(SignalError) -> ArraySlice<UInt8> {
        var content: ArraySlice<UInt8>?
        var reader = ProtobufReader(message)
        while let field = try reader.next() {
            if field.field == 1 { content = try field.value.slice() }
        }
        guard let content else { throw SignalError(.fingerprintParsingError) }
        return content
    }
}
