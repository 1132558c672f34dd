import InvisoMesh
import InvisoTesting

extension SeededGenerator {
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
    mutating func bool() -> Bool { next() & 1 == 1 }
    mutating func peer() -> PeerID { PeerID(rawValue: next()) }

    /// Text of up to `maxBytes` UTF-8 bytes mixing ASCII, 2-, 3- and 4-byte scalars.
    mutating func text(maxBytes: Int) -> String {
        let alphabet: [Character] = ["a", "Z", "0", " ", "é", "β", "✓", "€", "🙂", "#", "\n"]
        var result = ""
        let target = int(0...maxBytes)
        while true {
            let next = alphabet[int(0...(alphabet.count - 1))]
            if result.utf8.count + String(next).utf8.count > target { return result }
            result.append(next)
        }
    }

    /// A random encodable packet.
    mutating func packet(maxPayload: Int = 600) -> MeshPacket {
        let version: UInt8 = bool() ? 1 : 2
        let compressed = next() % 5 == 0
        let minimum = compressed ? (version == 2 ? 5 : 3) : 0
        return MeshPacket(
            version: version, type: MessageType(rawValue: UInt8(truncatingIfNeeded: next())),
            ttl: UInt8(truncatingIfNeeded: next()), timestamp: next(), senderID: peer(),
            recipientID: bool() ? peer() : nil,
            route: version == 2 && bool() ? (0..<int(1...6)).map { _ in peer() } : nil,
            payload: bytes(int(minimum...max(minimum, maxPayload))), isCompressed: compressed, isRSR: bool(),
            signature: bool() ? bytes(64) : nil)
    }
}
