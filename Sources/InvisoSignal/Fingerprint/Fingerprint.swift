import Crypto
import Foundation

/// A safety number for two identities, in libsignal's two forms (`Fingerprint`).
///
/// Each side's hash is SHA-512 iterated `iterations` times: the first round hashes
/// `0x0000 ‖ identityKey (33) ‖ stableID ‖ identityKey (33)`, every further round hashes
/// `previous ‖ identityKey (33)`. The ``displayable`` number uses the first 30 bytes of
/// each hash, the ``scannable`` form the first 32. Versions 1 and 2 give the same
/// displayable number and differ only in the scannable encoding's version field.
public struct Fingerprint: Sendable, Hashable {
    /// The iteration counts libsignal accepts (it rejects ≤ 1 and > 1,000,000).
    public static let validIterations = 2...1_000_000
    /// The versions this library produces.
    public static let supportedVersions: ClosedRange<UInt32> = 1...2

    /// The 60-digit number to read out.
    public let displayable: DisplayableFingerprint
    /// The form to show as a QR code and compare with the peer's.
    public let scannable: ScannableFingerprint

    /// Computes the safety number of our identity and a peer's.
    ///
    /// - Parameters:
    ///   - version: The fingerprint version, 1 or 2 (libsignal's clients use 2).
    ///   - iterations: The number of SHA-512 rounds (libsignal's clients use 5200).
    ///   - localStableID: Our stable id (for example the UTF-8 of an E.164 number or a
    ///     service id's bytes).
    ///   - localIdentity: Our identity key.
    ///   - remoteStableID: The peer's stable id.
    ///   - remoteIdentity: The peer's identity key.
    /// - Throws: ``SignalError/invalidIterations`` unless `iterations` is in 2…1,000,000;
    ///   ``SignalError/invalidArgument`` for a version other than 1 or 2.
    public init(
        version: UInt32,
        iterations: Int,
        localStableID: [UInt8],
        localIdentity: IdentityKey,
        remoteStableID: [UInt8],
        remoteIdentity: IdentityKey
    ) throws(SignalError) {
        try self.init(
            version: version, iterations: iterations, localStableID: localStableID, localKey: localIdentity.serialized,
            remoteStableID: remoteStableID, remoteKey: remoteIdentity.serialized)
    }

    /// The same computation over raw public-key bytes instead of a Signal ``IdentityKey``'s
    /// 33-byte serialisation: the nearby chat's safety number over two Ed25519 identities.
    ///
    /// - Throws: as the main initialiser.
    package init(
        version: UInt32, iterations: Int, localStableID: [UInt8], localKey: [UInt8], remoteStableID: [UInt8],
        remoteKey: [UInt8]
    ) throws(SignalError) {
        guard Self.validIterations.contains(iterations) else {
            throw SignalError(.invalidIterations, "\(iterations) iterations")
        }
        guard Self.supportedVersions.contains(version) else {
            throw SignalError(.invalidArgument, "fingerprint version must be 1 or 2")
        }
        let local = Self.hash(iterations: iterations, stableID: localStableID, key: localKey)
        let remote = Self.hash(iterations: iterations, stableID: remoteStableID, key: remoteKey)
        self.displayable = DisplayableFingerprint(localHash: local, remoteHash: remote)
        self.scannable = try ScannableFingerprint(
            version: version,
            localFingerprint: Array(local.prefix(ScannableFingerprint.contentByteCount)),
            remoteFingerprint: Array(remote.prefix(ScannableFingerprint.contentByteCount)))
    }

    /// One side's 64-byte fingerprint hash: SHA-512 over `0x0000 ‖ key ‖ stable id ‖ key`,
    /// then `iterations − 1` times over `previous digest ‖ key`.
    ///
    /// The rounds hash one reused buffer (`digest ‖ key`) in place: with 5,200 rounds per
    /// side, an array per round cost as much as the hashing (a safety number is computed
    /// when a chat is secured, on the way to its first message).
    package static func hash(iterations: Int, stableID: [UInt8], identity: IdentityKey) -> [UInt8] {
        hash(iterations: iterations, stableID: stableID, key: identity.serialized)
    }

    /// ``hash(iterations:stableID:identity:)`` over raw key bytes.
    package static func hash(iterations: Int, stableID: [UInt8], key: [UInt8]) -> [UInt8] {
        guard iterations > 0 else { return [0x00, 0x00] + key + stableID }
        var first = SHA512()
        first.update(data: [0x00, 0x00] + key + stableID)
        first.update(data: key)
        let digestCount = SHA512.byteCount
        var buffer = [UInt8](repeating: 0, count: digestCount + key.count)
        buffer.withUnsafeMutableBytes { round in
            let digest = UnsafeMutableRawBufferPointer(rebasing: round[..<digestCount])
            first.finalize().withUnsafeBytes { digest.copyMemory(from: $0) }
            key.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: round[digestCount...]).copyMemory(from: $0) }
            for _ in 1..<iterations {
                var hasher = SHA512()
                hasher.update(bufferPointer: UnsafeRawBufferPointer(round))
                hasher.finalize().withUnsafeBytes { digest.copyMemory(from: $0) }
            }
        }
        return Array(buffer.prefix(digestCount))
    }
}
