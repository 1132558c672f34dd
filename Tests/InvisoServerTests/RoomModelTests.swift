import Foundation
import InvisoServer
import Testing

@Suite("Room model: membership, and descriptions that never show device IDs or tokens")
struct RoomModelTests {
    static let created = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("Only client1 and client2 are members")
    func membership() {
        let room = Room(roomID: String(repeating: "a", count: 48), joinID: "123456", client1: "dev-1", client2: "dev-2", createdAt: Self.created)
        #expect(room.isMember("dev-1"))
        #expect(room.isMember("dev-2"))
        #expect(!room.isMember("dev-3"))
        #expect(!room.isMember(""))
    }

    @Test("Descriptions leave out device IDs and push tokens")
    func redactedDescriptions() {
        let room = Room(
            roomID: "0123456789abcdef0123456789abcdef0123456789abcdef", joinID: "123456", client1: "secret-device-1",
            client2: "secret-device-2", client1Token: "push-token-1", client2Token: "push-token-2", createdAt: Self.created)
        let pending = PendingRoom(
            joinID: "654321", client1: "secret-device-1", client1Token: "push-token-1", createdAt: Self.created,
            expiresAt: Self.created.addingTimeInterval(600))
        for text in [room.description, pending.description, "\(room)", "\(pending)"] {
            #expect(!text.contains("secret-device"))
            #expect(!text.contains("push-token"))
        }
        #expect(!room.description.contains(room.roomID))
    }

    @Test("Store errors compare by code and show it")
    func storeErrors() {
        #expect(RoomStoreError(.codeTaken, "x") == RoomStoreError.codeTaken)
        #expect(RoomStoreError(.unavailable) != RoomStoreError.codeTaken)
        #expect(RoomStoreError(.corrupt, "row 3").description == "RoomStoreError(corrupt: row 3)")
    }
}
