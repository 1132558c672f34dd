import InvisoNearby
import Testing

/// Three people's group machines, with the payloads they address to each other delivered
/// in order (as the pairwise conversations do).
struct GroupHarness {
    var groups: [NearbyPublicIdentity: NearbyGroup] = [:]
    var inbox: [NearbyPublicIdentity: [String]] = [:]
    var refusals: [NearbyPublicIdentity: [NearbyGroup.Failure]] = [:]

    mutating func deliver(_ outgoing: [NearbyGroup.Outgoing], from sender: NearbyPublicIdentity, dropping: Set<NearbyPublicIdentity> = []) throws {
        var queue = outgoing.map { ($0, sender) }
        while !queue.isEmpty {
            let (item, from) = queue.removeFirst()
            guard !dropping.contains(item.to) else { continue }
            switch item.payload {
            case .groupUpdate(let update):
                if var group = groups[item.to] {
                    let replies = try group.receive(update, from: from)
                    groups[item.to] = group
                    queue += replies.map { ($0, item.to) }
                } else {
                    let (group, replies) = try NearbyGroup.join(update, from: from, me: item.to)
                    groups[item.to] = group
                    queue += replies.map { ($0, item.to) }
                }
            case .groupMessage(_, let epoch, let ciphertext):
                guard var group = groups[item.to] else { continue }
                do {
                    let plaintext = try group.decrypt(ciphertext, epoch: epoch, from: from)
                    inbox[item.to, default: []].append(String(decoding: plaintext, as: UTF8.self))
                } catch {
                    refusals[item.to, default: []].append(error)
                }
                groups[item.to] = group
            case .groupLeave:
                guard var group = groups[item.to] else { continue }
                let replies = group.receiveLeave(from: from)
                groups[item.to] = group
                queue += replies.map { ($0, item.to) }
            default: break
            }
        }
    }

    mutating func say(_ text: String, as sender: NearbyPublicIdentity) throws -> [NearbyGroup.Outgoing] {
        var group = try #require(groups[sender])
        let outgoing = try group.encrypt(Array(text.utf8))
        groups[sender] = group
        return outgoing
    }
}

@Suite struct GroupTests {
    let alice = NearbyIdentity().publicKey
    let bob = NearbyIdentity().publicKey
    let carol = NearbyIdentity().publicKey

    @Test func everyoneReadsEveryoneThenARemovedMemberReadsNothingMore() throws {
        var harness = GroupHarness()
        let (group, updates) = try NearbyGroup.create(name: "team", me: alice, others: [bob, carol])
        harness.groups[alice] = group
        try harness.deliver(updates, from: alice)
        #expect(harness.groups[bob]?.members == [alice, bob, carol] && harness.groups[carol]?.epoch == 1)

        try harness.deliver(try harness.say("hi from alice", as: alice), from: alice)
        try harness.deliver(try harness.say("hi from bob", as: bob), from: bob)
        try harness.deliver(try harness.say("hi from carol", as: carol), from: carol)
        #expect(harness.inbox[alice] == ["hi from bob", "hi from carol"])
        #expect(harness.inbox[bob] == ["hi from alice", "hi from carol"])
        #expect(harness.inbox[carol] == ["hi from alice", "hi from bob"])

        // Alice removes carol: a new epoch, new keys for alice and bob, a notice for carol.
        var aliceGroup = try #require(harness.groups[alice])
        let removal = try aliceGroup.remove(carol)
        harness.groups[alice] = aliceGroup
        // Keep carol's old group state aside to see whether she could read what follows.
        let carolBefore = try #require(harness.groups[carol])
        try harness.deliver(removal, from: alice)
        #expect(harness.groups[carol]?.hasLeft == true)
        #expect(harness.groups[bob]?.members == [alice, bob] && harness.groups[bob]?.epoch == 2)

        let fromAlice = try harness.say("secret after carol left", as: alice)
        let fromBob = try harness.say("bob's secret", as: bob)
        try harness.deliver(fromAlice, from: alice)
        try harness.deliver(fromBob, from: bob)
        #expect(harness.inbox[bob]?.last == "secret after carol left")
        #expect(harness.inbox[alice]?.last == "bob's secret")
        // Even with the messages in hand and her old keys, carol opens nothing of epoch 2.
        let sealed = fromAlice.compactMap { if case .groupMessage(_, let epoch, let ciphertext) = $0.payload { (epoch, ciphertext) } else { nil } }
        var stale = carolBefore
        for (epoch, ciphertext) in sealed {
            #expect(throws: NearbyGroup.Failure.noKey) { try stale.decrypt(ciphertext, epoch: epoch, from: alice) }
        }
        // Carol's later messages are refused by the others: she is no member.
        #expect(throws: NearbyGroup.Failure.notMember) { try harness.groups[bob]!.decrypt([1, 2, 3], epoch: 1, from: carol) }
    }

    @Test func aMemberWhoLeavesMakesTheCreatorRotate() throws {
        var harness = GroupHarness()
        let (group, updates) = try NearbyGroup.create(name: "trio", me: alice, others: [bob, carol])
        harness.groups[alice] = group
        try harness.deliver(updates, from: alice)
        var bobGroup = try #require(harness.groups[bob])
        let leaving = bobGroup.leave()
        harness.groups[bob] = bobGroup
        try harness.deliver(leaving, from: bob)
        #expect(harness.groups[alice]?.epoch == 2 && harness.groups[alice]?.members == [alice, carol])
        #expect(harness.groups[carol]?.epoch == 2 && harness.groups[carol]?.members == [alice, carol])
        try harness.deliver(try harness.say("just us", as: carol), from: carol)
        #expect(harness.inbox[alice]?.last == "just us" && harness.inbox[bob] == nil)
    }

    @Test func onlyTheCreatorChangesMembership() throws {
        var harness = GroupHarness()
        let (group, updates) = try NearbyGroup.create(name: "g", me: alice, others: [bob])
        harness.groups[alice] = group
        try harness.deliver(updates, from: alice)
        var bobGroup = try #require(harness.groups[bob])
        #expect(throws: NearbyGroup.Failure.notCreator) { _ = try bobGroup.add(carol) }
        #expect(throws: NearbyGroup.Failure.notCreator) { _ = try bobGroup.remove(alice) }
        #expect(throws: NearbyGroup.Failure.invalidMembers) { _ = try NearbyGroup.create(name: "g", me: alice, others: [alice]) }
        let many = (0..<32).map { _ in NearbyIdentity().publicKey }
        #expect(throws: NearbyGroup.Failure.invalidMembers) { _ = try NearbyGroup.create(name: "g", me: alice, others: many) }
        // An update claiming a group in bob's name is refused by carol (bob is not its creator).
        let (fake, fakeUpdates) = try NearbyGroup.create(name: "fake", me: bob, others: [carol])
        _ = fake
        if case .groupUpdate(var update) = fakeUpdates[0].payload {
            update = try NearbyGroupUpdate(groupID: update.groupID, epoch: 1, name: "fake", members: [alice, carol], distribution: update.distribution)
            #expect(throws: NearbyGroup.Failure.notCreator) { _ = try NearbyGroup.join(update, from: bob, me: carol) }
        }
    }
}
