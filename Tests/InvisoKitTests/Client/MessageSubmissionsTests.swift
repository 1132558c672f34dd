@testable import InvisoKit
import Testing

@Suite("MessageSubmissions: sends from any thread, answered at once")
struct MessageSubmissionsTests {
    static func texts(_ range: Range<Int>) -> [ChatPayload] { range.map { .text("m\($0)") } }

    @Test func beforeTheSessionStartsASendIsTheWrongState() {
        var queue = MessageSubmissions()
        #expect(throws: ChatError.wrongState) { try queue.submit(Self.texts(0..<1)) }
        #expect(queue.pending.isEmpty && !queue.drainScheduled)
    }

    @Test func idsFollowTheMachineAndOneDrainIsAskedPerBurst() throws {
        var queue = MessageSubmissions()
        queue.sync(nextMessageID: 7, outboxRoom: 10, isClosed: false)
        let first = try queue.submit(Self.texts(0..<2))
        #expect(first.ids == 7..<9 && first.scheduleDrain)
        let second = try queue.submit(Self.texts(2..<3))
        #expect(second.ids == 9..<10 && !second.scheduleDrain)
        #expect(try queue.submit([]).ids.isEmpty)
        #expect(queue.take().count == 3 && queue.pending.isEmpty)
        // The machine took them (ids 7…9) and one more message of its own (a lifetime).
        queue.sync(nextMessageID: 11, outboxRoom: 6, isClosed: false)
        let third = try queue.submit(Self.texts(3..<4))
        #expect(third.ids == 11..<12 && third.scheduleDrain)
    }

    @Test func aBatchWithoutRoomIsRefusedWhole() throws {
        var queue = MessageSubmissions()
        queue.sync(nextMessageID: 1, outboxRoom: 3, isClosed: false)
        _ = try queue.submit(Self.texts(0..<2))
        #expect(throws: ChatError.outboxFull) { try queue.submit(Self.texts(2..<4)) }
        #expect(queue.pending.count == 2 && queue.nextID == 3 && queue.room == 1)
        // A step of the machine that did not take them keeps counting them.
        queue.sync(nextMessageID: 1, outboxRoom: 3, isClosed: false)
        #expect(queue.nextID == 3 && queue.room == 1)
        #expect(try queue.submit(Self.texts(2..<3)).ids == 3..<4)
    }

    @Test func anEndedSessionRefusesAndDropsWhatWaited() throws {
        var queue = MessageSubmissions()
        queue.sync(nextMessageID: 1, outboxRoom: 3, isClosed: false)
        _ = try queue.submit(Self.texts(0..<1))
        queue.sync(nextMessageID: 1, outboxRoom: 3, isClosed: true)
        #expect(queue.pending.isEmpty)
        #expect(throws: ChatError.closed) { try queue.submit(Self.texts(1..<2)) }
    }
}
