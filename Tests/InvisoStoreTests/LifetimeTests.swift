import Foundation
import GRDB
import InvisoStore
import Testing

@Suite("InvisoStore message lifetimes")
struct LifetimeTests {
    @Test("an ephemeral session keeps no messages")
    func ephemeral() throws {
        try Fixture.withStore { store, directory in
            try store.saveSession(Fixture.session("e", lifetime: .ephemeral))
            #expect(try store.session(id: "e")?.isEphemeral == true)
            let stored = try store.appendMessage(id: "m1", sessionID: "e", direction: .sent, text: "gone", at: Fixture.t0)
            #expect(stored == nil)
            #expect(try store.messages(sessionID: "e", now: Fixture.t0).isEmpty)
            let rows = try Fixture.withRawDatabase(directory) { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM messages") }
            #expect(rows == 0)
        }
    }

    @Test("every lifetime sets the expiry; deleteExpired removes exactly the expired messages")
    func deleteExpired() throws {
        try Fixture.withStore { store, directory in
            for lifetime in MessageLifetime.allCases where lifetime != .ephemeral {
                try store.saveSession(Fixture.session(lifetime.rawValue, lifetime: lifetime))
                let message = try store.appendMessage(id: "m", sessionID: lifetime.rawValue, direction: .sent, text: "x", at: Fixture.t0)
                #expect(message?.expiresAt == Fixture.t0.addingTimeInterval(lifetime.duration!))
            }
            try store.appendMessage(id: "later", sessionID: "1h", direction: .received, text: "y", at: Fixture.t0.addingTimeInterval(600))
            let hour = Fixture.t0.addingTimeInterval(3_600)
            #expect(try store.messages(sessionID: "1h", now: hour).map(\.id) == ["later"])
            #expect(try store.deleteExpired(now: hour.addingTimeInterval(-0.001)) == 0)
            #expect(try store.deleteExpired(now: hour) == 1)
            #expect(try store.messages(sessionID: "1h", now: Fixture.t0).map(\.id) == ["later"])
            #expect(try store.deleteExpired(now: Fixture.t0.addingTimeInterval(86_400)) == 3)
            #expect(try store.messages(sessionID: "7d", now: Fixture.t0).count == 1)
            #expect(try store.deleteExpired(now: Fixture.t0.addingTimeInterval(31 * 86_400)) == 2)
            #expect(try store.deleteExpired(now: Fixture.t0.addingTimeInterval(31 * 86_400)) == 0)
        }
    }

    @Test("a shorter lifetime shortens stored messages, a longer one does not extend them, ephemeral deletes them")
    func changeLifetime() throws {
        try Fixture.withStore { store, directory in
            try store.saveSession(Fixture.session("s", lifetime: .sevenDays))
            try store.appendMessage(id: "m", sessionID: "s", direction: .sent, text: "x", at: Fixture.t0)
            try store.setLifetime(.oneHour, sessionID: "s")
            #expect(try store.messages(sessionID: "s", now: Fixture.t0).first?.expiresAt == Fixture.t0.addingTimeInterval(3_600))
            try store.setLifetime(.thirtyDays, sessionID: "s")
            #expect(try store.messages(sessionID: "s", now: Fixture.t0).first?.expiresAt == Fixture.t0.addingTimeInterval(3_600))
            #expect(try store.session(id: "s")?.lifetime == .thirtyDays)
            try store.setLifetime(.ephemeral, sessionID: "s")
            #expect(try store.messages(sessionID: "s", now: Fixture.t0).isEmpty)
            #expect(try store.appendMessage(id: "n", sessionID: "s", direction: .sent, text: "x", at: Fixture.t0) == nil)
            // saveSession applies the same rule when it changes the lifetime.
            try store.setLifetime(.oneDay, sessionID: "s")
            try store.appendMessage(id: "n", sessionID: "s", direction: .sent, text: "x", at: Fixture.t0)
            try store.saveSession(Fixture.session("s", lifetime: .ephemeral))
            #expect(try store.messages(sessionID: "s", now: Fixture.t0).isEmpty)
        }
    }
}
