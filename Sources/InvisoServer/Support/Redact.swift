/// Shortened forms of bearer secrets for logs: enough to correlate lines, not enough to
/// use. Device IDs and push tokens are never logged in full.
enum Redact {
    /// The first four characters of a device ID and its length (`a1b2…(36)`).
    static func device(_ id: String) -> String {
        "\(id.prefix(4))…(\(id.utf8.count))"
    }

    /// The first eight characters of a room id.
    static func room(_ id: String) -> String {
        "\(id.prefix(8))…"
    }
}
