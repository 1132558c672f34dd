import Foundation
import InvisoWire
import Testing

/// `JSONDecoder` goes through the same validation as `init(json:)`: no unchecked path.
@Suite("Codable decoding validates")
struct CodableValidationTests {
    static func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(json.utf8))
    }

    @Test func restRequestsRefuseWhatTheServerRefuses() throws {
        let valid = try Self.decode(CreateRoomRequest.self, #"{"client1":"A-1","expiresInSeconds":"300"}"#)
        #expect(valid.expiresInSeconds == 300 && valid.joinid == nil)
        // A leading zero, an expiry out of range, a bad join code, an empty purge list.
        #expect(throws: (any Error).self) { try Self.decode(CreateRoomRequest.self, #"{"client1":"A","expiresInSeconds":"05"}"#) }
        #expect(throws: (any Error).self) { try Self.decode(CreateRoomRequest.self, #"{"client1":"A","expiresInSeconds":0}"#) }
        #expect(throws: (any Error).self) { try Self.decode(AcceptRoomRequest.self, #"{"joinid":"123456"}"#) }
        #expect(throws: (any Error).self) { try Self.decode(PurgeRequest.self, #"{"deviceIds":[]}"#) }
        #expect(throws: (any Error).self) { try Self.decode(CheckRoomRequest.self, #"{"joinid":"123456"}"#) }
    }

    @Test func relayPayloadsRefuseWhatTheParserRefuses() throws {
        let candidates = try Self.decode(TransportCandidates.self, #"{"candidates":[{"host":"10.0.0.1","port":7000}]}"#)
        #expect(candidates.candidates == [.init(host: "10.0.0.1", port: 7000)])
        #expect(throws: (any Error).self) {
            try Self.decode(TransportCandidates.self, #"{"candidates":[{"host":"10.0.0.1","port":70000}]}"#)
        }
        #expect(throws: (any Error).self) { try Self.decode(KeyExchange.self, #"{"publicKey":1}"#) }
        #expect(throws: (any Error).self) { try Self.decode(WebRTCOffer.self, #"{}"#) }
    }
}
