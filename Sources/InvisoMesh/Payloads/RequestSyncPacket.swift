/// The payload of a ``MessageType/requestSync`` packet: a Golomb-Rice coded set of the
/// packets the sender already has.
///
/// TLVs of type u8, length u16 big-endian: `0x01` P (u8 Golomb-Rice parameter, ≥ 1),
/// `0x02` M (u32 hash range, > 0), `0x03` the GR bitstream (at most 1,024 bytes accepted);
/// optional (iOS) `0x04` covered packet types (kept as raw bytes), `0x05` since-timestamp
/// (u64), `0x06` fragment-ID filter (UTF-8, comma-separated hex IDs, at most 1,024 bytes).
/// Unknown TLVs are skipped and not kept. Sources: permissionlesstech/bitchat
/// bitchat/Models/RequestSyncPacket.swift@2baed6903fc04dbd901cb24ee266002321de194e;
/// golden vector `request_sync_tlv`. Stricter than iOS: a known TLV of the wrong size, a
/// duplicate, or a partial TLV at the end is an error rather than ignored.
public struct RequestSyncPacket: Hashable, Sendable {
    /// The most GR bitstream or filter bytes accepted (iOS `maxAcceptBytes`).
    public static let maxDataBytes = 1024

    /// Golomb-Rice parameter P (≥ 1).
    public var p: UInt8
    /// Hash range M (> 0).
    public var m: UInt32
    /// The Golomb-Rice coded bitstream.
    public var data: [UInt8]
    /// TLV 0x04: the packet types the filter covers, as raw bytes.
    public var types: [UInt8]?
    /// TLV 0x05: the filter covers packets since this time (ms).
    public var sinceTimestamp: UInt64?
    /// TLV 0x06: comma-separated 16-hex-digit fragment IDs to restrict the fragment diff to.
    public var fragmentIDFilter: String?

    /// Creates a request.
    public init(
        p: UInt8, m: UInt32, data: [UInt8], types: [UInt8]? = nil, sinceTimestamp: UInt64? = nil,
        fragmentIDFilter: String? = nil
    ) {
        self.p = p
        self.m = m
        self.data = data
        self.types = types
        self.sinceTimestamp = sinceTimestamp
        self.fragmentIDFilter = fragmentIDFilter
    }

    /// The wire bytes.
    ///
    /// - Throws: ``MeshWireError/invalidField`` for P = 0 or M = 0,
    ///   ``MeshWireError/tooLarge`` when data or the filter exceed 1,024 bytes or the types
    ///   65,535.
    public func encoded() throws(MeshWireError) -> [UInt8] {
        guard p >= 1 else { throw MeshWireError(.invalidField, "P must be at least 1") }
        guard m > 0 else { throw MeshWireError(.invalidField, "M must be positive") }
        guard data.count <= Self.maxDataBytes else { throw MeshWireError(.tooLarge, "sync data") }
        var out: [UInt8] = []
        func put(_ type: UInt8, _ value: [UInt8]) {
            out.append(type)
            out.appendBigEndian(value.count, width: 2)
            out.append(contentsOf: value)
        }
        put(0x01, [p])
        var mBytes: [UInt8] = []
        mBytes.appendBigEndian(m, width: 4)
        put(0x02, mBytes)
        put(0x03, data)
        if let types {
            guard types.count <= Int(UInt16.max) else { throw MeshWireError(.tooLarge, "sync types") }
            put(0x04, types)
        }
        if let sinceTimestamp {
            var value: [UInt8] = []
            value.appendBigEndian(sinceTimestamp, width: 8)
            put(0x05, value)
        }
        if let fragmentIDFilter {
            let value = Array(fragmentIDFilter.utf8)
            guard value.count <= Self.maxDataBytes else { throw MeshWireError(.tooLarge, "fragment filter") }
            put(0x06, value)
        }
        return out
    }

    /// Decodes the wire bytes, skipping unknown TLVs.
    ///
    /// - Throws: ``MeshWireError/truncated``, ``MeshWireError/missingField`` (P, M or data),
    ///   ``MeshWireError/duplicateField``, ``MeshWireError/invalidField`` (wrong size, P = 0,
    ///   M = 0), ``MeshWireError/tooLarge`` (over 1,024 bytes), ``MeshWireError/invalidUTF8``.
    public init(decoding bytes: some Collection<UInt8>) throws(MeshWireError) {
        var reader = WireReader(bytes)
        var p: UInt8?
        var m: UInt32?
        var data: [UInt8]?
        var types: [UInt8]?
        var since: UInt64?
        var filter: String?
        while !reader.isAtEnd {
            let type = try reader.u8("TLV type")
            let length = Int(try reader.u16("TLV length"))
            var value = WireReader(try reader.slice(length, "TLV value"))
            switch type {
            case 0x01:
                guard p == nil else { throw MeshWireError(.duplicateField, "P") }
                guard length == 1 else { throw MeshWireError(.invalidField, "P length") }
                let parameter = try value.u8("P")
                guard parameter >= 1 else { throw MeshWireError(.invalidField, "P must be at least 1") }
                p = parameter
            case 0x02:
                guard m == nil else { throw MeshWireError(.duplicateField, "M") }
                guard length == 4 else { throw MeshWireError(.invalidField, "M length") }
                let range = try value.u32("M")
                guard range > 0 else { throw MeshWireError(.invalidField, "M must be positive") }
                m = range
            case 0x03:
                guard data == nil else { throw MeshWireError(.duplicateField, "sync data") }
                guard length <= Self.maxDataBytes else { throw MeshWireError(.tooLarge, "sync data") }
                data = Array(value.rest())
            case 0x04:
                guard types == nil else { throw MeshWireError(.duplicateField, "sync types") }
                types = Array(value.rest())
            case 0x05:
                guard since == nil else { throw MeshWireError(.duplicateField, "since timestamp") }
                guard length == 8 else { throw MeshWireError(.invalidField, "since timestamp length") }
                since = try value.u64("since timestamp")
            case 0x06:
                guard filter == nil else { throw MeshWireError(.duplicateField, "fragment filter") }
                guard length <= Self.maxDataBytes else { throw MeshWireError(.tooLarge, "fragment filter") }
                filter = try value.string(length, "fragment filter")
            default:
                continue
            }
        }
        guard let p else { throw MeshWireError(.missingField, "P") }
        guard let m else { throw MeshWireError(.missingField, "M") }
        guard let data else { throw MeshWireError(.missingField, "sync data") }
        self.init(p: p, m: m, data: data, types: types, sinceTimestamp: since, fragmentIDFilter: filter)
    }
}
