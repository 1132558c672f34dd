public import Foundation

/// Where sender-key records live, one per (sender address, distribution id).
///
/// ``GroupCipher`` loads a record, works on a copy, and stores it back only when the whole
/// operation succeeded, so a failed decryption never changes the store.
public protocol SenderKeyStore {
    /// Returns the record for `sender` in `distributionID`, or `nil` if there is none.
    ///
    /// - Parameters:
    ///   - sender: The sending device (our own address for our own chains).
    ///   - distributionID: The distribution id.
    /// - Throws: Whatever the storage layer throws.
    func loadSenderKey(sender: ProtocolAddress, distributionID: UUID) throws -> SenderKeyRecord?

    /// Saves `record` for `sender` in `distributionID`, replacing any previous one.
    ///
    /// - Parameters:
    ///   - record: The record to keep.
    ///   - sender: The sending device.
    ///   - distributionID: The distribution id.
    /// - Throws: Whatever the storage layer throws.
    mutating func storeSenderKey(_ record: SenderKeyRecord, sender: ProtocolAddress, distributionID: UUID) throws
}
