/// The address of one device of a peer: a name (libsignal: a service id or any stable
/// string) and a device id.
public struct ProtocolAddress: Hashable, Sendable, Codable {
    /// The peer's name.
    public let name: String
    /// The device id (libsignal allows 1 … 127).
    public let deviceID: UInt32

    /// Creates an address.
    public init(name: String, deviceID: UInt32) {
        self.name = name
        self.deviceID = deviceID
    }

    /// Parses `NAME.DEVICE` (the last `.` separates the device id).
    ///
    /// - Throws: ``SignalError/invalidArgument`` when there is no device id, it is not a
    ///   number in 1 … 127, or the name is empty.
    public init(parsing text: String) throws(SignalError) {
        guard let dot = text.lastIndex(of: "."), let device = UInt32(text[text.index(after: dot)...]),
            (1...127).contains(device), dot != text.startIndex
        else {
            throw SignalError(.invalidArgument, "address must be NAME.DEVICE with DEVICE in 1...127")
        }
        self.init(name: String(text[..<dot]), deviceID: device)
    }
}

// MARK: - CustomStringConvertible

extension ProtocolAddress: CustomStringConvertible {
    /// `NAME.DEVICE`.
    public var description: String { "\(name).\(deviceID)" }
}
