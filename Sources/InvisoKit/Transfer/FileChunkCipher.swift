import Crypto
public import Foundation
import InvisoCrypto

/// Seals and opens a transfer's chunks with AES-256-GCM under the offer's fresh key.
///
/// The nonce is `0x00000000 ‖ index (uint64 BE)`: unique per chunk because the key is used
/// for one file only. The associated data `"inviso-file-v1" ‖ transfer id ‖ index (uint64 BE)`
/// binds each chunk to its transfer and place, so a chunk moved to another index or
/// transfer does not open. A sealed chunk is `ciphertext ‖ tag (16)`.
public struct FileChunkCipher: Sendable {
    /// Bytes the seal adds to a chunk.
    public static let overhead = 16
    private static let label = Array("inviso-file-v1".utf8)

    private let key: SymmetricKey
    private let id: FileTransferID

    /// A cipher for `offer`'s chunks.
    public init(offer: FileOffer) {
        key = offer.key.withUnsafeBytes { SymmetricKey(data: $0) }
        id = offer.id
    }

    /// Seals chunk `index`.
    public func seal(_ plaintext: some DataProtocol, index: UInt64) -> [UInt8] {
        do {
            let box = try AES.GCM.seal(plaintext, using: key, nonce: Self.nonce(index), authenticating: aad(index))
            var sealed = [UInt8]()
            sealed.reserveCapacity(plaintext.count + Self.overhead)
            sealed += box.ciphertext
            sealed += box.tag
            return sealed
        } catch {
            preconditionFailure("AES-GCM seals with a 32-byte key and a 12-byte nonce")
        }
    }

    /// Opens chunk `index`.
    ///
    /// - Throws: ``FileTransferError/Code/authenticationFailed`` when it does not open.
    public func open(_ sealed: [UInt8], index: UInt64) throws(FileTransferError) -> Data {
        guard sealed.count >= Self.overhead else { throw FileTransferError(.authenticationFailed, "file chunk") }
        do {
            let box = try AES.GCM.SealedBox(
                nonce: Self.nonce(index), ciphertext: sealed.dropLast(Self.overhead), tag: sealed.suffix(Self.overhead))
            return try AES.GCM.open(box, using: key, authenticating: aad(index))
        } catch {
            throw FileTransferError(.authenticationFailed, "file chunk")
        }
    }

    private static func nonce(_ index: UInt64) -> AES.GCM.Nonce {
        var bytes = [UInt8](repeating: 0, count: 4)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: index >> UInt64(shift))) }
        return try! AES.GCM.Nonce(data: bytes)  // 12 bytes is a valid nonce length
    }

    private func aad(_ index: UInt64) -> [UInt8] {
        var bytes = Self.label + id.bytes
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: index >> UInt64(shift))) }
        return bytes
    }
}
