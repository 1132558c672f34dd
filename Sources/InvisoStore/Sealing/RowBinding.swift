import Foundation

/// Where a sealed value lives: its table, its row's key and its column. The binding is the
/// AES-GCM associated data, so a value copied to another row, table or column no longer
/// authenticates.
///
/// Associated data: `"InvisoStore"` ‖ format byte ‖ for each of table, column, then every
/// key part in order: a 4-byte big-endian length ‖ the UTF-8 bytes. Lengths make the
/// encoding unambiguous (`("a", "bc")` and `("ab", "c")` differ).
struct RowBinding: Sendable, Hashable {
    let table: String
    let column: String
    let key: [String]

    init(table: String, column: String = "sealed", key: [String]) {
        self.table = table
        self.column = column
        self.key = key
    }

    /// The associated data for format `format`.
    func associatedData(format: UInt8) -> Data {
        var data = Data("InvisoStore".utf8)
        data.append(format)
        for part in [table, column] + key {
            let bytes = Data(part.utf8)
            withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { data.append(contentsOf: $0) }
            data.append(bytes)
        }
        return data
    }
}

// MARK: - The bindings the store uses

extension RowBinding {
    static func session(_ id: String) -> RowBinding { RowBinding(table: "sessions", key: [id]) }

    static func message(_ id: String, session: String) -> RowBinding {
        RowBinding(table: "messages", key: [session, id])
    }

    static func identity(session: String) -> RowBinding { RowBinding(table: "identities", key: [session]) }

    static func secret(_ kind: String, session: String) -> RowBinding {
        RowBinding(table: "secrets", key: [session, kind])
    }

    static let offlineAccount = RowBinding(table: "offline_account", key: ["1"])

    static func offlineContact(_ id: String) -> RowBinding { RowBinding(table: "offline_contacts", key: [id]) }

    static func nearbyRecord(_ kind: String, _ id: String) -> RowBinding {
        RowBinding(table: "nearby_records", key: [kind, id])
    }
    static func nearbyMessage(_ id: String, conversation: String) -> RowBinding {
        RowBinding(table: "nearby_messages", key: [conversation, id])
    }
    static func offlineMessage(_ id: String, contact: String) -> RowBinding {
        RowBinding(table: "offline_messages", key: [contact, id])
    }

    static func wrappedKey(kdf: String) -> RowBinding {
        RowBinding(table: "keyring", column: "wrapped_key", key: ["1", kdf])
    }
}
