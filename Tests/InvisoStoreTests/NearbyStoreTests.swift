import Foundation
import GRDB
import InvisoStore
import Testing

@Suite struct NearbyStoreTests {
    @Test func recordsRoundTripSealedAndBoundToTheirRow() throws {
        try Fixture.withStore { store, directory in
            let secret = Data("identity-private-key-0123456789ab".utf8)
            try store.saveNearby(records: [
                NearbyStoredRecord(kind: "profile", id: "me", updatedAt: 1, value: secret),
                NearbyStoredRecord(kind: "peer", id: "aa", updatedAt: 2, value: Data("bob".utf8)),
                NearbyStoredRecord(kind: "peer", id: "bb", updatedAt: 3, value: Data("carol".utf8)),
            ])
            try store.saveNearby(records: [NearbyStoredRecord(kind: "peer", id: "aa", updatedAt: 4, value: Data("bob2".utf8))],
                                 deleting: [("peer", "bb")])
            #expect(try store.nearbyRecords(kind: "profile").map(\.value) == [secret])
            let peers = try store.nearbyRecords(kind: "peer")
            #expect(peers.map(\.id) == ["aa"] && peers.map(\.value) == [Data("bob2".utf8)] && peers[0].updatedAt == 4)
            try Fixture.expectAbsent([secret, Data("bob2".utf8)], in: directory)

            // A sealed value moved to another row does not open.
            try Fixture.withRawDatabase(directory) { db in
                try db.execute(sql: "UPDATE nearby_records SET sealed = (SELECT sealed FROM nearby_records WHERE id = 'me') WHERE id = 'aa'")
            }
            #expect(throws: StoreError.self) { _ = try store.nearbyRecords(kind: "peer") }
        }
    }

    @Test func messagesExpireAndRedeliveriesAreNotDuplicated() throws {
        try Fixture.withStore { store, _ in
            let keep = NearbyStoredMessage(conversation: "aa", id: "1", storedAt: 100, expiresAt: nil, value: Data("hi".utf8))
            let brief = NearbyStoredMessage(conversation: "aa", id: "2", storedAt: 101, expiresAt: 1_000, value: Data("bye".utf8))
            let added = [try store.addNearbyMessage(keep), try store.addNearbyMessage(brief), try store.addNearbyMessage(keep)]
            #expect(added == [true, true, false])
            let before = try store.nearbyMessages(conversation: "aa", now: 999).map(\.id)
            // Expired but not yet deleted: not shown.
            let atExpiry = try store.nearbyMessages(conversation: "aa", now: 1_000).map(\.id)
            let deleted = try store.deleteExpiredNearbyMessages(now: 5_000)
            let after = try store.nearbyMessages(conversation: "aa", now: 0).map(\.id)
            let other = try store.nearbyMessages(conversation: "other", now: 0)
            #expect(before == ["1", "2"] && atExpiry == ["1"] && deleted == 1 && after == ["1"] && other.isEmpty)
        }
    }
}
