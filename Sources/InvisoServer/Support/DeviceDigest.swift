import Crypto
import InvisoCrypto

/// What the server stores instead of a device ID: `sha256:` and the hex SHA-256 of
/// `inviso-device-id:` followed by the ID's UTF-8.
///
/// The server only ever compares device IDs (is this the code's creator, a member of this
/// room, a device to purge?), so it keeps digests: a copy of `rooms.sqlite` (or its WAL, or
/// a PostgreSQL dump) no longer hands out the bearer secrets that let anyone join, delete
/// or purge a member's rooms. Device IDs are per-session random values (the app's are
/// UUIDs), so an unkeyed hash cannot be reversed by trying candidates; a keyed hash would
/// add nothing but a key to manage. Migrations turn the IDs stored by earlier versions
/// into digests (`DeviceDigest.sql` is the same function in PostgreSQL).
enum DeviceDigest {
    /// Marks a stored value as a digest.
    static let prefix = "sha256:"
    /// Domain separation.
    static let domain = "inviso-device-id:"

    /// The digest of `deviceID`.
    static func of(_ deviceID: String) -> String {
        prefix + Hex.encode(Array(SHA256.hash(data: Array((domain + deviceID).utf8))))
    }

    /// The same digest as a PostgreSQL expression over `column`.
    static func sql(_ column: String) -> String {
        "'\(prefix)' || encode(sha256(convert_to('\(domain)' || \(column), 'UTF8')), 'hex')"
    }
}
