import Foundation

extension UUID {
    /// The 16 bytes of the UUID in RFC 4122 (network) order, as libsignal writes a
    /// distribution id.
    var bytes: [UInt8] {
        withUnsafeBytes(of: uuid) { Array($0) }
    }

    /// Reads a UUID from exactly 16 bytes; `nil` for any other length.
    init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        let b = Array(bytes)
        self.init(
            uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
        )
    }
}
