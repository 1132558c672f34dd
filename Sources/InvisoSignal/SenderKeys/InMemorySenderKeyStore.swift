public import Foundation

/// A ``SenderKeyStore`` that keeps records in a dictionary: for tests and for clients
/// that persist records themselves. The description is redacted.
public struct InMemorySenderKeyStore: SenderKeyStore, Sendable, Equatable {
    private struct Key: Hashable, Sendable {
        let sender: ProtocolAddress
        let distributionID: UUID
    }

    private var records: [Key: SenderKeyRecord] = [:]

    /// An empty store.
    public init() {}

    /// The number of stored records.
    public var count: Int { records.count }

    /// Returns the record for `sender` in `distributionID`, or `nil`.
    ///
    /// - Parameters:
    ///   - sender: The sending device.
    ///   - distributionID: The distribution id.
    public func loadSenderKey(sender: ProtocolAddress, distributionID: UUID) -> SenderKeyRecord? {
        records[Key(sender: sender, distributionID: distributionID)]
    }

    /// Saves `record` for `sender` in `distributionID`.
    ///
    /// - Parameters:
    ///   - record: The record to keep.
    ///   - sender: The sending device.
    ///   - distributionID: The distribution id.
    public mutating func storeSenderKey(_ record: SenderKeyRecord, sender: ProtocolAddress, distributionID: UUID) {
        records[Key(sender: sender, distributionID: distributionID)] = record
    }
}

// MARK: - Redacted descriptions

extension InMemorySenderKeyStore: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The number of records only.
    public var description: String { "InMemorySenderKeyStore(\(records.count) records)" }
    /// Same as ``description``.
    public var debugDescription: String { description }
    /// A mirror without the records.
    public var customMirror: Mirror { Mirror(self, children: ["count": records.count], displayStyle: .struct) }
}
