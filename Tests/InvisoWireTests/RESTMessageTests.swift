import Foundation
import InvisoWire
import Testing

@Suite("REST bodies")
struct RESTMessageTests {
    func object(_ text: String) throws -> JSONObject {
        guard case .object(let object) = try JSONValue.parse(text) else { throw RESTError.invalidJSON }
        return object
    }

    @Test("create: the app's body, a string lifetime, and each error code")
    func create() throws {
        let request = try CreateRoomRequest(
            json: try object(#"{"joinid":"012345","client1":"dev","expiresInSeconds":"300","client1_token":"","platform":"ios"}"#))
        #expect(request == CreateRoomRequest(joinid: "012345", client1: "dev", expiresInSeconds: 300, platform: "ios"))
        #expect(try CreateRoomRequest(json: try object(#"{"joinid":null,"client1":"d","expiresInSeconds":1}"#)).joinid == nil)
        let long = String(repeating: "d", count: 129)
        let cases: [(String, RESTError)] = [
            (#"{"expiresInSeconds":1}"#, .missing("client1")),
            (#"{"client1":null,"expiresInSeconds":1}"#, .missing("client1")),
            (#"{"client1":"\#(long)","expiresInSeconds":1}"#, .invalid("client1")),
            (#"{"client1":"d"}"#, .missing("expiresInSeconds")),
            (#"{"client1":"d","expiresInSeconds":-1}"#, .invalid("expiresInSeconds")),
            (#"{"client1":"d","expiresInSeconds":"1e3"}"#, .invalid("expiresInSeconds")),
            (#"{"client1":"d","expiresInSeconds":99999999999999999999}"#, .invalid("expiresInSeconds")),
            (#"{"joinid":123456,"client1":"d","expiresInSeconds":1}"#, .invalid("joinid")),
            (#"{"joinid":"１２３４５６","client1":"d","expiresInSeconds":1}"#, .invalid("joinid")),
            (#"{"client1":"d","expiresInSeconds":1,"client1_token":5}"#, .invalid("client1_token")),
        ]
        for (body, error) in cases {
            #expect(throws: error, "\(body)") { try CreateRoomRequest(json: try object(body)) }
        }
        #expect(RESTError.missing("client1").body == JSONObject([("error", .string("missing_client1"))]))
        #expect(RESTError.missing("client1").status == 400)
    }

    @Test("purge: list, legacy single ID, limits")
    func purge() throws {
        #expect(try PurgeRequest(json: try object(#"{"deviceIds":["a","b"]}"#)).deviceIds == ["a", "b"])
        #expect(try PurgeRequest(json: try object(#"{"deviceId":"a"}"#)).deviceIds == ["a"])
        #expect(throws: RESTError.missing("deviceIds")) { try PurgeRequest(json: try object(#"{"deviceIds":[]}"#)) }
        #expect(throws: RESTError.invalid("deviceIds")) { try PurgeRequest(json: try object(#"{"deviceIds":"a"}"#)) }
        #expect(throws: RESTError.invalid("deviceIds")) { try PurgeRequest(json: try object(#"{"deviceIds":[1]}"#)) }
        #expect(throws: RESTError.missing("deviceId")) { try PurgeRequest(json: try object(#"{"deviceId":""}"#)) }
        let many = "[" + (0...PurgeRequest.maxDeviceIDs).map { #""\#($0)""# }.joined(separator: ",") + "]"
        #expect(throws: RESTError.tooManyDeviceIDs) { try PurgeRequest(json: try object(#"{"deviceIds":\#(many)}"#)) }
    }

    @Test("responses serialise with the app's field names, and Codable agrees")
    func responses() throws {
        let created = CreateRoomResponse(exp: "2026-11-21T10:00:00.000Z", joinid: "123456")
        #expect(String(decoding: created.json.serialized(), as: UTF8.self) == #"{"ok":true,"exp":"2026-11-21T10:00:00.000Z","joinid":"123456"}"#)
        let decoded = try JSONDecoder().decode(CreateRoomResponse.self, from: Data(created.json.serialized()))
        #expect(decoded == created)
        let purge = PurgeResponse(deviceIdCount: 2, roomsDeleted: 1, pendingsDeleted: 3)
        #expect(String(decoding: purge.json.serialized(), as: UTF8.self) == #"{"success":true,"deviceIdCount":2,"roomsDeleted":1,"pendingsDeleted":3}"#)
        let request = AcceptRoomRequest(joinid: "123456", client2: "x", client2_token: "t", platform: "cli")
        let encoded = try JSONEncoder().encode(request)
        #expect(try AcceptRoomRequest(json: try object(String(decoding: encoded, as: UTF8.self))) == request)
    }
}
