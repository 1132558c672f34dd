/// An error from encoding or decoding BitChat wire bytes (packets, payloads, fragments,
/// compressed data).
///
/// Errors compare by kind (the static members below), not by their detail, which names
/// the field or limit concerned. Descriptions never contain payload bytes, keys or
/// plaintext.
public struct MeshWireError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Code: Hashable, Sendable {
        case truncated
        case trailingBytes
        case tooLarge
        case unsupportedVersion
        case invalidField
        case missingField
        case duplicateField
        case invalidUTF8
        case malformedCompressedData
        case decompressedSizeExceeded
        case notAFragment
        case conflictingFragment
        case reassemblyLimit
        case signingFailed
    }

    package let code: Code
    private let detail: String

    package init(_ code: Code, _ detail: String = "") {
        self.code = code
        self.detail = detail
    }

    /// The bytes end before a field that a header, flag or length says is there.
    public static let truncated = MeshWireError(.truncated)
    /// Bytes follow the last field and are not valid BitChat padding (a length field lied,
    /// or garbage was appended).
    public static let trailingBytes = MeshWireError(.trailingBytes)
    /// The input or a value exceeds a size limit (the maximum packet size, a field width,
    /// a decoder's cap).
    public static let tooLarge = MeshWireError(.tooLarge)
    /// The packet's version byte is neither 1 nor 2.
    public static let unsupportedVersion = MeshWireError(.unsupportedVersion)
    /// A field has a value the format does not allow (wrong key length, unknown flag bit,
    /// a zero where a count must be positive, a non-canonical encoding, …).
    public static let invalidField = MeshWireError(.invalidField)
    /// A required field or TLV is absent.
    public static let missingField = MeshWireError(.missingField)
    /// A TLV that may occur once occurs twice.
    public static let duplicateField = MeshWireError(.duplicateField)
    /// A text field is not valid UTF-8.
    public static let invalidUTF8 = MeshWireError(.invalidUTF8)
    /// A compressed payload is not a valid raw DEFLATE stream of the declared size.
    public static let malformedCompressedData = MeshWireError(.malformedCompressedData)
    /// Decompression would exceed the output limit (a declared size above the limit, or a
    /// stream that expands further than declared).
    public static let decompressedSizeExceeded = MeshWireError(.decompressedSizeExceeded)
    /// A packet given to the reassembler is not of type ``MessageType/fragment``.
    public static let notAFragment = MeshWireError(.notAFragment)
    /// A fragment contradicts what earlier fragments of the same packet said (another
    /// total or original type, or other bytes at an index already held).
    public static let conflictingFragment = MeshWireError(.conflictingFragment)
    /// Accepting a fragment would exceed a reassembly limit (concurrent packets, buffered
    /// bytes, packet size).
    public static let reassemblyLimit = MeshWireError(.reassemblyLimit)
    /// The signing key refused to sign.
    public static let signingFailed = MeshWireError(.signingFailed)

    /// Errors compare by kind, not by their explanatory detail.
    public static func == (lhs: MeshWireError, rhs: MeshWireError) -> Bool { lhs.code == rhs.code }
    /// Hashes the kind only, consistent with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// A short explanation naming the field or limit, free of payload bytes and secrets.
    public var description: String {
        let base: String =
            switch code {
            case .truncated: "truncated input"
            case .trailingBytes: "unexpected trailing bytes"
            case .tooLarge: "size limit exceeded"
            case .unsupportedVersion: "unsupported packet version"
            case .invalidField: "invalid field"
            case .missingField: "missing field"
            case .duplicateField: "duplicate field"
            case .invalidUTF8: "text is not valid UTF-8"
            case .malformedCompressedData: "malformed compressed data"
            case .decompressedSizeExceeded: "decompressed size limit exceeded"
            case .notAFragment: "packet is not a fragment"
            case .conflictingFragment: "fragment conflicts with earlier fragments"
            case .reassemblyLimit: "reassembly limit reached"
            case .signingFailed: "signing failed"
            }
        return detail.isEmpty ? base : "\(base): \(detail)"
    }
}
