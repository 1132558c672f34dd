/// The version byte that starts every libsignal wire message: the message version in the
/// high nibble, the current version of the format family in the low nibble.
enum WireVersion {
    /// The oldest message version libsignal still accepts.
    static let oldestSupported: UInt8 = 3

    /// The version byte for `version` in a family whose current version is `current`.
    static func byte(version: UInt8, current: UInt8) -> UInt8 {
        version << 4 | current
    }

    /// Reads the message version from a version byte.
    ///
    /// - Throws: ``SignalError/legacyVersion`` below version 3,
    ///   ``SignalError/unrecognizedVersion`` above `current`.
    static func parse(_ byte: UInt8, current: UInt8) throws(SignalError) -> UInt8 {
        let version = byte >> 4
        if version < oldestSupported { throw SignalError(.legacyVersion, "message version \(version)") }
        if version > current { throw SignalError(.unrecognizedVersion, "message version \(version)") }
        return version
    }
}
