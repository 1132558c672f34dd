public import Foundation

/// A join code waiting for its second device (the Node server's `pendings` row).
///
/// Device IDs and push tokens are bearer secrets: they are stored, compared and purged,
/// never returned by the API and never logged in full.
public struct PendingRoom: Sendable, Equatable {
    /// The 6-digit join code.
    public var joinID: String
    /// The creator's per-session device ID.
    public var client1: String
    /// The creator's push token, if it gave one.
    public var client1Token: String?
    /// The creator's platform (`ios`, `android`, …), if it said.
    public var client1Platform: String?
    /// When the code was created.
    public var createdAt: Date
    /// When the code stops being accepted.
    public var expiresAt: Date
    /// The room made when the code was accepted (`nil` while pending).
    public var roomID: String?
    /// Failed guesses against this code so far (see ``RoomStore/recordFailedGuess(joinID:limit:now:)``).
    public var failedGuesses: Int

    /// Creates a pending code.
    public init(
        joinID: String, client1: String, client1Token: String? = nil, client1Platform: String? = nil,
        createdAt: Date, expiresAt: Date, roomID: String? = nil, failedGuesses: Int = 0
    ) {
        self.joinID = joinID
        self.client1 = client1
        self.client1Token = client1Token
        self.client1Platform = client1Platform
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.roomID = roomID
        self.failedGuesses = failedGuesses
    }
}

/// A room: two devices paired through a join code. `client1` (the creator) is always the
/// initiator.
public struct Room: Sendable, Equatable {
    /// The room id: 48 lowercase hex characters (192 random bits).
    public var roomID: String
    /// The join code the room came from.
    public var joinID: String
    /// The creator's device ID.
    public var client1: String
    /// The joiner's device ID.
    public var client2: String
    /// The creator's push token, if it gave one.
    public var client1Token: String?
    /// The joiner's push token, if it gave one.
    public var client2Token: String?
    /// The creator's platform (`ios`, `android`, …), if it said.
    public var client1Platform: String?
    /// The joiner's platform, if it said.
    public var client2Platform: String?
    /// When the code was accepted.
    public var createdAt: Date

    /// Creates a room.
    public init(
        roomID: String, joinID: String, client1: String, client2: String, client1Token: String? = nil,
        client2Token: String? = nil, client1Platform: String? = nil, client2Platform: String? = nil, createdAt: Date
    ) {
        self.roomID = roomID
        self.joinID = joinID
        self.client1 = client1
        self.client2 = client2
        self.client1Token = client1Token
        self.client2Token = client2Token
        self.client1Platform = client1Platform
        self.client2Platform = client2Platform
        self.createdAt = createdAt
    }

    /// Whether `deviceID` is one of the two members.
    public func isMember(_ deviceID: String) -> Bool {
        deviceID == client1 || deviceID == client2
    }
}

// MARK: - CustomStringConvertible

extension PendingRoom: CustomStringConvertible {
    /// The code and expiry; device IDs and tokens are left out.
    public var description: String {
        "PendingRoom(joinID: \(joinID), expiresAt: \(expiresAt), accepted: \(roomID != nil))"
    }
}

extension Room: CustomStringConvertible {
    /// The room id prefix only; device IDs and tokens are left out.
    public var description: String { "Room(\(roomID.prefix(8))…)" }
}
