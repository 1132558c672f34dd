/// The payload of a ``MessageType/fragment`` packet: a ``FragmentHeader`` and one chunk of
/// the original packet's encoding.
public struct FragmentPayload: Hashable, Sendable {
    /// Which fragment this is.
    public var header: FragmentHeader
    /// The chunk of the encoded original packet.
    public var chunk: [UInt8]

    /// Creates a fragment payload.
    public init(header: FragmentHeader, chunk: [UInt8]) {
        self.header = header
        self.chunk = chunk
    }

    /// The wire bytes: header, then chunk.
    public func encoded() -> [UInt8] {
        var out = header.encoded()
        out.append(contentsOf: chunk)
        return out
    }

    /// Decodes the wire bytes. The chunk may be empty here; the ``Reassembler`` refuses
    /// empty chunks and inconsistent headers.
    ///
    /// - Throws: ``MeshWireError/truncated`` below 13 bytes.
    public init(decoding bytes: some Collection<UInt8>) throws(MeshWireError) {
        var reader = WireReader(bytes)
        header = try FragmentHeader(reading: &reader)
        chunk = Array(reader.rest())
    }
}
