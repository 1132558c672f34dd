import Foundation
public import InvisoWire
import Prometheus
import Logging

/// What a REST handler answers: a status and an optional JSON body.
public struct RESTReply: Sendable, Equatable {
    /// The HTTP status.
    public var status: Int
    /// The JSON body (`nil` for an empty body, e.g. `204`).
    public var body: JSONObject?

    /// Creates a reply.
    public init(status: Int, body: JSONObject?) {
        self.status = status
        self.body = body
    }

    init(_ error: RESTError) {
        self.init(status: error.status, body: error.body)
    }
}

/// The REST API's logic, independent of the HTTP framework: each method takes a request
/// body's bytes (and the client's address where limits apply) and returns the reply.
///
/// Rules beyond the Node server (see docs/server.md): codes are never overwritten
/// (`409 code_taken`), a second accept is `409 already_accepted`, failed accepts are
/// limited per client address, a code is burnt after too many failed guesses against it,
/// only a member may delete a room, and device IDs never appear in replies or logs.
struct RoomAPI: Sendable {
    let store: any RoomStore
    let hub: SignalingHub
    let environment: ServerEnvironment
    let limits: ServerLimits
    /// Per source: failed guesses (accepts and checks of codes that are not live, creates
    /// of codes that are taken), creations, checks, live codes.
    let sourceLimits: any SourceLimits
    let turn: TURNConfiguration?
    let metrics: ServerMetrics
    let logger: Logger

    /// How many random codes to try before giving up on allocating one.
    static let allocationAttempts = 32

    // MARK: - Rooms

    /// `POST /api/rooms`.
    ///
    /// Not a way to learn which codes are live: creations are rate-limited per source, a
    /// source holds at most ``ServerLimits/liveCodesPerSource`` live codes, and a proposed
    /// code that is taken (`409 code_taken`) counts as a failed guess like a wrong
    /// `accept` — ten a minute, then `429`. A client that omits `joinid` gets a free code
    /// from the server and never sees a 409.
    func createRoom(_ body: some Collection<UInt8>, clientAddress: String) async -> RESTReply {
        await reply {
            let now = environment.now()
            let request = try CreateRoomRequest(json: try Self.object(body))
            guard try await sourceLimits.takeCreate(clientAddress, now: now) else {
                metrics.rateLimited(.create)
                throw RESTError.tooManyRequests
            }
            let attempt = request.joinid == nil ? nil : try await beginAttempt(clientAddress, now: now)
            guard let place = try await sourceLimits.reserveCode(clientAddress, now: now) else {
                await attempt?.succeeded()
                metrics.rateLimited(.liveCodes)
                throw RESTError.tooManyCodes
            }
            let expires = now.addingTimeInterval(TimeInterval(request.expiresInSeconds))
            // The device ID is kept as a digest, the push token not at all (this server
            // sends no push notifications).
            let creator = DeviceDigest.of(request.client1)
            var code = request.joinid ?? environment.randomJoinCode()
            var tries = 1
            while true {
                let pending = PendingRoom(
                    joinID: code, client1: creator, client1Token: nil,
                    client1Platform: request.platform, createdAt: now, expiresAt: expires)
                do {
                    try await store.insertPending(pending, now: now)
                    break
                } catch let error as RoomStoreError where error.code == .codeTaken {
                    guard request.joinid == nil, tries < Self.allocationAttempts else {
                        await place.cancel()
                        // A proposed code that is taken stays counted as a failed guess.
                        throw request.joinid == nil ? RESTError(status: 503, code: "no_free_code") : RESTError.codeTaken
                    }
                    tries += 1
                    code = environment.randomJoinCode()
                } catch {
                    await place.cancel()
                    await attempt?.succeeded()
                    throw error
                }
            }
            await attempt?.succeeded()
            await place.commit(code: code, expiresAt: expires)
            metrics.codesCreated.increment()
            logger.info("code created", metadata: ["expiresIn": "\(request.expiresInSeconds)"])
            return RESTReply(status: 201, body: CreateRoomResponse(exp: Self.isoTimestamp(expires), joinid: code).json)
        }
    }

    /// `POST /api/rooms/accept`.
    func acceptRoom(_ body: some Collection<UInt8>, clientAddress: String) async -> RESTReply {
        await reply {
            let now = environment.now()
            let request = try AcceptRoomRequest(json: try Self.object(body))
            let attempt = try await beginAttempt(clientAddress, now: now)
            let roomID = environment.randomHex(24)
            let outcome: AcceptOutcome
            do {
                outcome = try await store.accept(
                    joinID: request.joinid, client2: DeviceDigest.of(request.client2), client2Token: nil,
                    client2Platform: request.platform, roomID: roomID, now: now)
            } catch {
                await attempt.succeeded()  // the store failed, not the guess
                throw error
            }
            switch outcome {
            case .accepted(let room):
                await attempt.succeeded()
                await sourceLimits.releaseCode(request.joinid)
                metrics.roomsCreated.increment()
                logger.info("code accepted", metadata: ["room": "\(Redact.room(room.roomID))"])
                await hub.codeAccepted(joinID: request.joinid, roomID: room.roomID)
                return RESTReply(status: 200, body: RoomIDResponse(roomid: room.roomID).json)
            case .notFoundOrExpired:
                throw RESTError.notFoundOrExpired  // the attempt stays counted as a failure
            case .alreadyAccepted:
                try await burnIfGuessed(request.joinid, now: now)
                throw RESTError.alreadyAccepted
            }
        }
    }

    /// `POST /api/rooms/check`: rate-limited per source; a check of a code that is not
    /// live, or of a live code with the wrong creator, counts as a failed guess.
    func checkRoom(_ body: some Collection<UInt8>, clientAddress: String) async -> RESTReply {
        await reply {
            let now = environment.now()
            let request = try CheckRoomRequest(json: try Self.object(body))
            guard try await sourceLimits.takeCheck(clientAddress, now: now) else {
                metrics.rateLimited(.check)
                throw RESTError.tooManyRequests
            }
            let attempt = try await beginAttempt(clientAddress, now: now)
            let outcome: CheckOutcome
            do {
                outcome = try await store.check(joinID: request.joinid, client1: DeviceDigest.of(request.client1), now: now)
            } catch {
                await attempt.succeeded()
                throw error
            }
            switch outcome {
            case .accepted(let roomID):
                await attempt.succeeded()
                return RESTReply(status: 200, body: RoomIDResponse(roomid: roomID).json)
            case .pending:
                await attempt.succeeded()
                return RESTReply(status: 204, body: nil)
            case .notFound:
                // A live code asked about with the wrong creator is also a guess against the code.
                if try await store.pending(joinID: request.joinid, now: now) != nil {
                    try await burnIfGuessed(request.joinid, now: now)
                }
                throw RESTError.notFoundOrExpired
            }
        }
    }

    /// `GET /api/rooms?roomid=`.
    func getRoom(roomID: String?) async -> RESTReply {
        await reply {
            guard let roomID, !roomID.isEmpty else { throw RESTError.missing("roomid") }
            guard roomID.utf8.count <= ClientMessage.maxIdentifierLength, let room = try await store.room(id: roomID) else {
                throw RESTError.notFound
            }
            return RESTReply(status: 200, body: RoomIDResponse(roomid: room.roomID).json)
        }
    }

    /// `DELETE /api/rooms`.
    func deleteRoom(_ body: some Collection<UInt8>) async -> RESTReply {
        await reply {
            let request = try DeleteRoomRequest(json: try Self.object(body))
            switch try await store.deleteRoom(id: request.roomid, deviceID: DeviceDigest.of(request.deviceId)) {
            case .deleted:
                logger.info("room deleted", metadata: ["room": "\(Redact.room(request.roomid))"])
                await hub.roomDeleted(request.roomid)
                return RESTReply(status: 200, body: JSONObject([("ok", .bool(true))]))
            case .notFound:
                return RESTReply(status: 200, body: JSONObject([("ok", .bool(true))]))
            case .notMember:
                throw RESTError.notMember
            }
        }
    }

    /// `POST /api/user/purge`.
    func purge(_ body: some Collection<UInt8>) async -> RESTReply {
        await reply {
            let request = try PurgeRequest(json: try Self.object(body))
            let ids = Array(Set(request.deviceIds)).sorted()
            let counts = try await store.purge(deviceIDs: ids.map(DeviceDigest.of))
            // Gone codes are no longer live: they stop counting against their creator's
            // twenty (a client that renews its rooms, as `inviso listen`, would otherwise run out).
            for code in counts.joinIDs { await sourceLimits.releaseCode(code) }
            logger.info(
                "purged", metadata: ["devices": "\(ids.count)", "rooms": "\(counts.roomsDeleted)", "pendings": "\(counts.pendingsDeleted)"])
            await hub.devicesPurged(ids)
            let response = PurgeResponse(
                deviceIdCount: ids.count, roomsDeleted: counts.roomsDeleted, pendingsDeleted: counts.pendingsDeleted)
            return RESTReply(status: 200, body: response.json)
        }
    }

    /// `POST /api/badge/reset`: the app calls it when it opens; this server keeps no badge
    /// counts (it sends no push notifications), so it only validates the body.
    func resetBadge(_ body: some Collection<UInt8>) async -> RESTReply {
        await reply {
            _ = try DeviceRequest(json: try Self.object(body))
            return RESTReply(status: 200, body: JSONObject([("ok", .bool(true))]))
        }
    }

    /// `POST /api/turn`: TURN credentials for a member of a live room.
    func turnCredentials(_ body: some Collection<UInt8>) async -> RESTReply {
        await reply {
            guard let turn else { throw RESTError.turnNotConfigured }
            let request = try DeviceRequest(json: try Self.object(body))
            guard try await store.hasRoom(member: DeviceDigest.of(request.deviceId)) else { throw RESTError.notMember }
            return RESTReply(status: 200, body: turn.credential(for: request.deviceId, now: environment.now()).json)
        }
    }


    // MARK: - Helpers

    /// Starts a guess-like attempt for `clientAddress`, counted as a failure until it
    /// succeeds; `429 too_many_attempts` when the source used up its failures.
    private func beginAttempt(_ clientAddress: String, now: Date) async throws -> SourceAttempt {
        guard let attempt = try await sourceLimits.beginAttempt(clientAddress, now: now) else {
            metrics.rateLimited(.accept)
            throw RESTError.tooManyAttempts
        }
        return attempt
    }

    /// Counts a failed guess against `joinID` and logs when that burnt the code.
    private func burnIfGuessed(_ joinID: String, now: Date) async throws {
        if try await store.recordFailedGuess(joinID: joinID, limit: limits.guessesPerCode, now: now) {
            logger.notice("code burnt after repeated failed guesses")
        }
    }

    /// Runs a handler, mapping its errors to replies: ``RESTError`` as itself, store
    /// failures as `503 unavailable` (logged without request data).
    private func reply(_ body: () async throws -> RESTReply) async -> RESTReply {
        do {
            return try await body()
        } catch let error as RESTError {
            return RESTReply(error)
        } catch {
            logger.error("request failed", metadata: ["error": "\(error)"])
            return RESTReply(.unavailable)
        }
    }

    /// The body as a JSON object (`400 invalid_json` otherwise).
    static func object(_ body: some Collection<UInt8>) throws(RESTError) -> JSONObject {
        guard case .object(let object) = try? JSONValue.parse(body) else { throw .invalidJSON }
        return object
    }

    /// ISO 8601 UTC with milliseconds, like JavaScript's `toISOString()`.
    static func isoTimestamp(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let seconds = milliseconds.quotientAndRemainder(dividingBy: 1000)
        var days = seconds.quotient.quotientAndRemainder(dividingBy: 86_400)
        if days.remainder < 0 { days = (days.quotient - 1, days.remainder + 86_400) }
        let millis = seconds.remainder < 0 ? seconds.remainder + 1000 : seconds.remainder
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days.quotient + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        let secondOfDay = days.remainder
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):"
            + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(millis, 3))Z"
    }
}
