import InvisoTesting
import Foundation
@testable import InvisoServer
import InvisoWire
import Testing

/// Join codes cannot be listed or hoarded (issue 16, HIGH 2, LOW 11): a taken code's 409
/// is a counted guess, creations and checks are rate-limited per source, a source holds a
/// bounded number of live codes, and the iOS app's flows still work.
@Suite("Join-code limits")
struct JoinCodeLimitsTests {
    @Test("scanning create for live codes finds at most ten a minute, then 429 — also for accept")
    func createIsNoOracle() async throws {
        try await TestServer.with { server, _ in
            // Twenty victims' live codes, every other code from 123450.
            let now = server.clock.wallClock
            for index in 0..<20 {
                try await server.store.insertPending(
                    PendingRoom(
                        joinID: String(123_450 + 2 * index), client1: "victim-\(index)", createdAt: now,
                        expiresAt: now.addingTimeInterval(600)),
                    now: now)
            }
            var found: [String] = []
            var refused = 0
            for candidate in 123_450..<123_490 {
                let reply = try await server.post("/api/rooms", #"{"joinid":"\#(candidate)","client1":"scanner","expiresInSeconds":60}"#)
                switch reply.status {
                case 409: found.append(String(candidate))
                case 429: refused += 1
                case 201: break
                default: Issue.record("unexpected \(reply.status) \(reply.body)")
                }
            }
            // Before: all twenty answered 409. Now ten failed guesses, then 429.
            #expect(found.count == 10)
            #expect(refused == 40 - 10 - 9)  // nine free codes were created between the ten 409s
            // The scanner's accepts are refused too (failed guesses are shared), so a found
            // code cannot be taken over.
            let hijack = try await server.post("/api/rooms/accept", #"{"joinid":"\#(found[0])","client2":"thief"}"#)
            #expect(hijack.status == 429)
        }
    }

    @Test("taken codes count as failed guesses: after ten 409s the source gets 429 for a minute")
    func takenCodesAreGuesses() async throws {
        try await TestServer.with { server, _ in
            #expect(try await server.post("/api/rooms", #"{"joinid":"900900","client1":"a","expiresInSeconds":600}"#).status == 201)
            for _ in 0..<9 {
                #expect(try await server.post("/api/rooms", #"{"joinid":"900900","client1":"b","expiresInSeconds":600}"#).status == 409)
            }
            // Nine 409s and one success: one failure left.
            #expect(try await server.post("/api/rooms", #"{"joinid":"900900","client1":"b","expiresInSeconds":600}"#).status == 409)
            let blocked = try await server.post("/api/rooms", #"{"joinid":"900901","client1":"b","expiresInSeconds":600}"#)
            #expect(blocked.status == 429 && blocked.error == "too_many_attempts")
            server.clock.advance(by: .seconds(61))
            // The iOS app's flow: its own free code is created.
            #expect(try await server.post("/api/rooms", #"{"joinid":"900901","client1":"b","expiresInSeconds":600}"#).status == 201)
        }
    }

    @Test("creations are rate-limited per source")
    func createRate() async throws {
        var limits = ServerLimits()
        limits.createBurst = 5
        limits.createsPerMinute = 6
        try await TestServer.with(limits: limits) { server, _ in
            for _ in 0..<5 {
                #expect(try await server.post("/api/rooms", #"{"client1":"a","expiresInSeconds":60}"#).status == 201)
            }
            let limited = try await server.post("/api/rooms", #"{"client1":"a","expiresInSeconds":60}"#)
            #expect(limited.status == 429 && limited.error == "too_many_requests")
            server.clock.advance(by: .seconds(10))  // one token back (6 a minute)
            #expect(try await server.post("/api/rooms", #"{"client1":"a","expiresInSeconds":60}"#).status == 201)
            let metrics = try await server.request("GET", "/metrics").body
            #expect(metrics.contains(#"inviso_rate_limited_total{limit="create"} 1"#))
        }
    }

    @Test("a source holds at most its live-code cap; accepted or expired codes free places")
    func liveCodeCap() async throws {
        var limits = ServerLimits()
        limits.liveCodesPerSource = 3
        try await TestServer.with(limits: limits) { server, _ in
            var codes: [String] = []
            for _ in 0..<3 {
                let reply = try await server.post("/api/rooms", #"{"client1":"hoarder","expiresInSeconds":120}"#)
                #expect(reply.status == 201)
                codes.append(try #require(reply.json?["joinid"]?.stringValue))
            }
            let capped = try await server.post("/api/rooms", #"{"client1":"hoarder","expiresInSeconds":120}"#)
            #expect(capped.status == 429 && capped.error == "too_many_codes")
            #expect(try await server.post("/api/rooms/accept", #"{"joinid":"\#(codes[0])","client2":"friend"}"#).status == 200)
            #expect(try await server.post("/api/rooms", #"{"client1":"hoarder","expiresInSeconds":120}"#).status == 201)
            #expect(try await server.post("/api/rooms", #"{"client1":"hoarder","expiresInSeconds":120}"#).status == 429)
            server.clock.advance(by: .seconds(121))
            #expect(try await server.post("/api/rooms", #"{"client1":"hoarder","expiresInSeconds":120}"#).status == 201)
        }
    }

    @Test("purged codes free their places at once: a client that renews its rooms (inviso listen) never runs out")
    func purgeFreesLiveCodes() async throws {
        var limits = ServerLimits()
        limits.liveCodesPerSource = 3
        try await TestServer.with(limits: limits) { server, _ in
            for round in 0..<4 {
                for index in 0..<3 {
                    let reply = try await server.post("/api/rooms", #"{"client1":"listener-\#(round)-\#(index)","expiresInSeconds":600}"#)
                    #expect(reply.status == 201, "round \(round): \(reply.body)")
                }
                #expect(try await server.post("/api/rooms", #"{"client1":"listener-extra","expiresInSeconds":600}"#).status == 429)
                let ids = (0..<3).map { #""listener-\#(round)-\#($0)""# }.joined(separator: ",")
                let purged = try await server.post("/api/user/purge", #"{"deviceIds":[\#(ids)]}"#)
                #expect(purged.json?["pendingsDeleted"] == .integer(3))
            }
        }
    }

    @Test("checks of codes that are not live count as failed guesses; checks are rate-limited")
    func checkLimits() async throws {
        var limits = ServerLimits()
        limits.checkBurst = 15
        limits.checksPerMinute = 15
        try await TestServer.with(limits: limits) { server, _ in
            for guess in 0..<10 {
                #expect(try await server.post("/api/rooms/check", #"{"joinid":"\#(700_000 + guess)","client1":"x"}"#).status == 404)
            }
            let blocked = try await server.post("/api/rooms/check", #"{"joinid":"700100","client1":"x"}"#)
            #expect(blocked.status == 429 && blocked.error == "too_many_attempts")
            server.clock.advance(by: .seconds(61))
            // The creator's honest polling: 204 while pending, never counted as a failure.
            #expect(try await server.post("/api/rooms", #"{"joinid":"700200","client1":"me","expiresInSeconds":600}"#).status == 201)
            for _ in 0..<15 {
                #expect(try await server.post("/api/rooms/check", #"{"joinid":"700200","client1":"me"}"#).status == 204)
            }
            let limited = try await server.post("/api/rooms/check", #"{"joinid":"700200","client1":"me"}"#)
            #expect(limited.status == 429 && limited.error == "too_many_requests")
        }
    }

    @Test("a burst of concurrent failed accepts lets exactly the limit through, never more")
    func concurrentFailures() async throws {
        try await TestServer.with { server, _ in
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for guess in 0..<40 {
                    group.addTask {
                        try await server.post("/api/rooms/accept", #"{"joinid":"\#(800_000 + guess)","client2":"g"}"#).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 404 }.count == 10)
            #expect(statuses.filter { $0 == 429 }.count == 30)
        }
    }
}
