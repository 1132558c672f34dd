import Crypto
import Foundation
import InvisoServer
import InvisoWire
import Testing

/// One known answer for ``TURNConfiguration/credential(for:now:)``, computed outside Swift.
struct TURNVector: Sendable, CustomTestStringConvertible {
    var name: String
    var secret: [UInt8]
    var deviceID: String
    var now: Date
    var ttlSeconds: Int64
    var username: String
    var credential: String

    var testDescription: String { name }

    /// Every vector. Each was computed with Python's standard library (no Swift involved):
    ///
    ///     python3 -c 'import hmac,hashlib,base64; d=DEVICE; u="%d:%s"%(NOW+TTL,
    ///       hashlib.sha256(("inviso-turn:"+d).encode()).hexdigest()[:16]); print(u,
    ///       base64.b64encode(hmac.new(SECRET, u.encode(), hashlib.sha1).digest()).decode())'
    ///
    /// with the DEVICE, NOW, TTL and SECRET given above each vector.
    static let all: [TURNVector] = [
        // d="device-0123456789abcdef", NOW=1800000000, TTL=86400, SECRET=b"inviso test secret"
        TURNVector(
            name: "ASCII secret, default TTL", secret: Array("inviso test secret".utf8),
            deviceID: "device-0123456789abcdef", now: Date(timeIntervalSince1970: 1_800_000_000),
            ttlSeconds: 86_400, username: "1800086400:7d56fff6b060d7f8", credential: "hXX32gMW6MRkb5SQOcOZZ7yxBYg="
        ),
        // The same, with 0.75 s past the whole second (dropped: expiry is in whole seconds).
        TURNVector(
            name: "fraction of a second in now", secret: Array("inviso test secret".utf8),
            deviceID: "device-0123456789abcdef", now: Date(timeIntervalSince1970: 1_800_000_000.75),
            ttlSeconds: 86_400, username: "1800086400:7d56fff6b060d7f8", credential: "hXX32gMW6MRkb5SQOcOZZ7yxBYg="
        ),
        // d="Ünïcode device ✓", NOW=1700000000, TTL=3600, SECRET=bytes(range(32))
        TURNVector(
            name: "binary secret, Unicode device ID, 1 h TTL", secret: Array(0..<32),
            deviceID: "Ünïcode device ✓", now: Date(timeIntervalSince1970: 1_700_000_000),
            ttlSeconds: 3_600, username: "1700003600:7216fb1d15634c31", credential: "G1yq97b4DWARsSn/IqXOFnIsOIY="
        ),
    ]
}

@Suite("TURN credentials")
struct TURNCredentialTests {
    static let urls = [
        "turn:turn.example.org:3478?transport=udp", "turns:turn.example.org:5349", "stun:stun.example.org",
    ]

    @Test("known answers (computed with Python's hmac, hashlib and base64)", arguments: TURNVector.all)
    func knownAnswer(_ vector: TURNVector) throws {
        let configuration = try TURNConfiguration(
            secret: SymmetricKey(data: vector.secret), urls: Self.urls, ttl: .seconds(vector.ttlSeconds)
        )
        let issued = configuration.credential(for: vector.deviceID, now: vector.now)
        #expect(
            issued
                == TURNCredentialsResponse(
                    urls: Self.urls, username: vector.username, credential: vector.credential,
                    ttl: Int(vector.ttlSeconds)
                )
        )
    }

    @Test("the vector runner has vectors to run")
    func vectorsExist() {
        #expect(TURNVector.all.count == 3)
    }

    @Test("a textual secret is its UTF-8 bytes (coturn's static-auth-secret)")
    func textualSecret() throws {
        let vector = TURNVector.all[0]
        let configuration = try TURNConfiguration(secret: "inviso test secret", urls: Self.urls)
        #expect(configuration.ttl == .seconds(86_400))
        let issued = configuration.credential(for: vector.deviceID, now: vector.now)
        #expect(issued.username == vector.username)
        #expect(issued.credential == vector.credential)
        #expect(issued.ttl == 86_400)
    }

    @Test("expiry is now plus the TTL, in whole Unix seconds", arguments: [1, 60, 3_600, 86_400, 2_592_000])
    func expiry(_ ttl: Int) throws {
        let configuration = try TURNConfiguration(secret: "s", urls: Self.urls, ttl: .seconds(ttl))
        for now in [0.0, 1_234_567_890.5, 1_800_000_000, 4_102_444_799.999] {
            let issued = configuration.credential(for: "device-a", now: Date(timeIntervalSince1970: now))
            let expiry = try #require(issued.username.split(separator: ":").first.flatMap { Int($0) })
            #expect(expiry == Int(now.rounded(.down)) + ttl)
            #expect(issued.ttl == ttl)
        }
    }

    @Test("a fraction of a second in the TTL is dropped")
    func fractionalTTL() throws {
        let configuration = try TURNConfiguration(secret: "s", urls: Self.urls, ttl: .milliseconds(90_999))
        #expect(configuration.ttl == .seconds(90))
        let issued = configuration.credential(for: "device-a", now: Date(timeIntervalSince1970: 1_000))
        #expect(issued.ttl == 90)
        #expect(issued.username.hasPrefix("1090:"))
    }

    @Test("the user id is 16 hex digits of SHA-256(\"inviso-turn:\" + device ID), never the device ID")
    func userID() throws {
        // python3 -c 'import hashlib; print(hashlib.sha256(b"inviso-turn:").hexdigest()[:16])'
        #expect(TURNConfiguration.userID(forDeviceID: "") == "ec069c7a09552d4e")
        #expect(TURNConfiguration.userID(forDeviceID: "device-0123456789abcdef") == "7d56fff6b060d7f8")

        let configuration = try TURNConfiguration(secret: "s", urls: Self.urls)
        var seen = Set<String>()
        for index in 0..<200 {
            let deviceID = "device-\(index)-" + String(repeating: "x", count: index % 40)
            let userID = TURNConfiguration.userID(forDeviceID: deviceID)
            #expect(userID.count == 16)
            #expect(userID.allSatisfy { "0123456789abcdef".contains($0) })
            let issued = configuration.credential(for: deviceID, now: Date(timeIntervalSince1970: 1_800_000_000))
            #expect(issued.username == "1800086400:\(userID)")
            #expect(!issued.username.contains(deviceID))
            #expect(!issued.credential.contains(deviceID))
            seen.insert(userID)
        }
        #expect(seen.count == 200)
    }

    @Test("the credential is base64 of a 20-byte HMAC-SHA1 and depends on secret, device and time")
    func credentialShape() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let first = try TURNConfiguration(secret: "secret-1", urls: Self.urls)
        let second = try TURNConfiguration(secret: "secret-2", urls: Self.urls)
        let issued = first.credential(for: "device-a", now: now)
        #expect(Data(base64Encoded: issued.credential)?.count == 20)
        #expect(first.credential(for: "device-a", now: now) == issued)
        #expect(second.credential(for: "device-a", now: now).credential != issued.credential)
        #expect(first.credential(for: "device-b", now: now).credential != issued.credential)
        #expect(first.credential(for: "device-a", now: now.addingTimeInterval(1)).credential != issued.credential)
    }

    @Test("descriptions, debug descriptions and mirrors never show the secret or the credential")
    func redaction() throws {
        let secret = "very-secret-turn-key-4f1c"
        let configuration = try TURNConfiguration(secret: secret, urls: Self.urls)
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in [
            configuration.description, String(describing: configuration), String(reflecting: configuration),
            "\(configuration)", dumped,
        ] {
            #expect(!text.contains(secret))
            #expect(!text.contains("4f1c"))
            #expect(text.contains("<redacted>"))
        }
        #expect(configuration.description.contains("turn:turn.example.org:3478?transport=udp"))

        let deviceID = "device-bearer-secret-99"
        let issued = configuration.credential(for: deviceID, now: Date(timeIntervalSince1970: 1_800_000_000))
        var dumpedCredential = ""
        dump(issued, to: &dumpedCredential)
        for text in [String(describing: issued), String(reflecting: issued), dumpedCredential] {
            #expect(!text.contains(issued.credential))
            #expect(!text.contains(deviceID))
            #expect(!text.contains(secret))
            #expect(text.contains(issued.username))
        }
    }

    /// Configurations that must be refused, with the code each gets.
    static let invalidCases: [(secret: String, urls: [String], ttl: Int, code: TURNConfigurationError.Code)] = [
        ("", urls, 60, .emptySecret),
        ("s", [], 60, .noURLs),
        ("s", ["https://turn.example.org"], 60, .invalidURL),
        ("s", ["turn.example.org:3478"], 60, .invalidURL),
        ("s", ["turn:"], 60, .invalidURL),
        ("s", ["TURN:turn.example.org"], 60, .invalidURL),
        ("s", ["stuns:turn.example.org"], 60, .invalidURL),
        ("s", ["turn:turn.example.org", "turn: spaced.example.org"], 60, .invalidURL),
        ("s", ["turn:turn.example.org\n"], 60, .invalidURL),
        ("s", [""], 60, .invalidURL),
        ("s", urls, 0, .invalidTTL),
        ("s", urls, -60, .invalidTTL),
        ("s", urls, 2_592_001, .invalidTTL),
    ]

    @Test("invalid configurations are refused with a code", arguments: invalidCases)
    func invalid(secret: String, urls: [String], ttl: Int, code: TURNConfigurationError.Code) {
        #expect(throws: TURNConfigurationError(code)) {
            try TURNConfiguration(secret: secret, urls: urls, ttl: .seconds(ttl))
        }
    }

    @Test("an empty key is refused; the error never names the secret or a URL")
    func errorDetail() {
        #expect(throws: TURNConfigurationError(.emptySecret)) {
            try TURNConfiguration(secret: SymmetricKey(data: [UInt8]()), urls: Self.urls)
        }
        do {
            _ = try TURNConfiguration(secret: "hunter2-secret", urls: ["turn:ok.example.org", "http://user:pw@x"])
            Issue.record("an http: URL was accepted")
        } catch let error as TURNConfigurationError {
            #expect(error.code == .invalidURL)
            #expect(error.description.contains("urls[1]"))
            #expect(!error.description.contains("hunter2"))
            #expect(!error.description.contains("pw@"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test("the smallest and largest TTLs are accepted")
    func ttlBounds() throws {
        #expect(try TURNConfiguration(secret: "s", urls: Self.urls, ttl: .seconds(1)).ttl == .seconds(1))
        #expect(
            try TURNConfiguration(secret: "s", urls: Self.urls, ttl: TURNConfiguration.maximumTTL).ttl
                == .seconds(2_592_000))
    }
}
