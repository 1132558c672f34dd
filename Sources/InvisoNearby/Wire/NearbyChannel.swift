public import InvisoNoise

/// The secure channel of an established nearby connection: records of up to
/// ``maxRecordBytes`` sealed with the Noise transport keys, each record cut into fragments
/// that fit one Noise message.
///
/// Each frame body is a Noise transport message whose plaintext is
/// `flags (1) ‖ fragment`, where flag bit 0 says more fragments of the same record follow.
/// Noise's nonces make every frame unique in its direction: a frame dropped, replayed,
/// reordered or injected fails to open, and the connection is closed.
public struct NearbyChannel: Sendable {
    /// The largest record (a data record's payload is at most 128 KiB).
    public static let maxRecordBytes = 256 * 1024
    /// The most plaintext bytes one fragment carries.
    static let fragmentBytes = CipherState.maximumPlaintextLength - 1

    private var transport: NoiseTransport
    private var partial: [UInt8] = []
    private var failed = false

    /// A channel over the keys of a completed handshake.
    public init(transport: NoiseTransport) {
        self.transport = transport
    }

    /// Seals `record` into one or more length-prefixed frames, ready for the socket.
    ///
    /// - Throws: ``NearbyError/Code/frameTooLarge`` for an empty record or one over
    ///   ``maxRecordBytes``.
    public mutating func seal(_ record: [UInt8]) throws(NearbyError) -> [UInt8] {
        guard !record.isEmpty, record.count <= Self.maxRecordBytes else {
            throw NearbyError(.frameTooLarge, "record size")
        }
        var output: [UInt8] = []
        output.reserveCapacity(record.count + (record.count / Self.fragmentBytes + 1) * 19)
        var offset = 0
        while offset < record.count {
            let end = min(offset + Self.fragmentBytes, record.count)
            var plaintext = [UInt8]()
            plaintext.reserveCapacity(end - offset + 1)
            plaintext.append(end < record.count ? 0x01 : 0x00)
            plaintext += record[offset..<end]
            let sealed: [UInt8]
            do {
                sealed = try transport.encrypt(plaintext)
            } catch {
                preconditionFailure("a fragment fits one Noise message and the nonce space is not exhausted")
            }
            output.append(UInt8(sealed.count >> 8))
            output.append(UInt8(sealed.count & 0xFF))
            output += sealed
            offset = end
        }
        return output
    }

    /// Opens one frame body; returns the record once its last fragment is in.
    ///
    /// - Throws: ``NearbyError/Code/authenticationFailed`` when the frame does not open,
    ///   ``NearbyError/Code/malformed`` for an unknown flag or an empty fragment, and
    ///   ``NearbyError/Code/frameTooLarge`` when a record grows past the limit. After a
    ///   throw the channel refuses everything (the connection is closed).
    public mutating func open(_ body: [UInt8]) throws(NearbyError) -> [UInt8]? {
        guard !failed else { throw NearbyError(.unexpectedMessage, "channel closed after an error") }
        let plaintext: [UInt8]
        do {
            plaintext = try transport.decrypt(body)
        } catch {
            failed = true
            throw NearbyError(.authenticationFailed, "channel frame")
        }
        guard let flags = plaintext.first, flags <= 0x01, plaintext.count > 1 else {
            failed = true
            throw NearbyError(.malformed, "channel fragment")
        }
        guard partial.count + plaintext.count - 1 <= Self.maxRecordBytes else {
            failed = true
            throw NearbyError(.frameTooLarge, "record size")
        }
        if flags == 0x00, partial.isEmpty { return Array(plaintext[1...]) }
        partial += plaintext[1...]
        guard flags == 0x00 else { return nil }
        defer { partial = [] }
        return partial
    }
}
