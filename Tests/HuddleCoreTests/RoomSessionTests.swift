import Testing

@testable import HuddleCore

/// Three viewers' rooms wired together by hand, with a fake clock: the DESIGN worked example
/// as the nodes themselves live it.
@Suite(.offThePool) struct RoomSessionTests {
    let ids = (0..<3).map { _ in NodeIdentity.generate() }
    let base = WallTime.milliseconds(sinceEpoch: 1_700_000_000_000)

    /// Every room receives everything every other room makes.
    struct Lan {
        var rooms: [RoomSession]
        var outputs: [[RoomOutput]]

        mutating func make(_ who: Int, _ body: EventBody, at now: WallTime, signer: NodeIdentity) throws {
            let (event, own) = try rooms[who].compose(body, now: now, signer: signer)
            outputs[who] += own
            for other in rooms.indices where other != who {
                outputs[other] += rooms[other].receive(event, now: now)
            }
        }

        mutating func wakeAll(at now: WallTime) {
            for index in rooms.indices { outputs[index] += rooms[index].wake(now: now) }
        }

        func messages(_ who: Int) -> [ShownMessage] {
            outputs[who].compactMap { if case .message(let message) = $0 { message } else { nil } }
        }
    }

    func lan() throws -> Lan {
        var lan = Lan(
            rooms: ids.map { RoomSession(room: "superbowl", reader: $0.id) }, outputs: [[], [], []])
        for (index, nick) in ["one", "two", "three"].enumerated() {
            try lan.make(index, .join(nick: nick), at: base, signer: ids[index])
        }
        return lan
    }

    @Test func theWorkedExampleHoldsMessagesBackExactly() throws {
        var lan = try lan()
        try lan.make(0, .mark(label: "A"), at: base + .seconds(2), signer: ids[0])
        try lan.make(1, .mark(label: "a"), at: base + .seconds(4), signer: ids[1])
        try lan.make(2, .calibrationEvent(label: "B"), at: base + .seconds(5), signer: ids[2])
        try lan.make(2, .mark(label: "B"), at: base + .seconds(6), signer: ids[2])
        try lan.make(1, .mark(label: "B "), at: base + .seconds(10), signer: ids[1])
        for room in lan.rooms {
            #expect(room.calibration.offset(of: ids[0].id) == .zero)
            #expect(room.calibration.offset(of: ids[1].id) == .seconds(2))
            #expect(room.calibration.offset(of: ids[2].id) == .seconds(-2))
        }

        // Node 3 (2 s ahead of node 1) writes at t; node 1 sees it 2 s later, node 2 4 s later.
        let t = base + .seconds(20)
        try lan.make(2, .chat(text: "touchdown"), at: t, signer: ids[2])
        #expect(lan.messages(2).map(\.held) == [.zero])
        #expect(lan.messages(0).isEmpty && lan.messages(1).isEmpty)
        #expect(lan.rooms[0].nextWake == t + .seconds(2))
        #expect(lan.rooms[1].nextWake == t + .seconds(4))
        lan.wakeAll(at: t + .milliseconds(1_999))
        #expect(lan.messages(0).isEmpty)
        lan.wakeAll(at: t + .seconds(2))
        #expect(lan.messages(0).map(\.held) == [.seconds(2)])
        #expect(lan.messages(0).first?.gameTime == t + .seconds(2))
        #expect(lan.messages(1).isEmpty)
        lan.wakeAll(at: t + .seconds(4))
        #expect(lan.messages(1).map(\.held) == [.seconds(4)])

        // Node 1's messages appear on node 3 at once.
        try lan.make(0, .chat(text: "what a play"), at: t + .seconds(5), signer: ids[0])
        #expect(lan.messages(2).map(\.text) == ["touchdown", "what a play"])
        #expect(lan.messages(2).last?.held == .zero)
    }

    @Test func peersAreAnnouncedAndPromptedAndOffsetsReportedInWords() throws {
        var lan = try lan()
        #expect(lan.outputs[0].contains(.joined(Member(id: ids[1].id, nick: "two"))))
        try lan.make(1, .calibrationEvent(label: "Kickoff"), at: base + .seconds(1), signer: ids[1])
        #expect(lan.outputs[0].contains(.calibrationEvent(label: "kickoff", by: Member(id: ids[1].id, nick: "two"))))
        try lan.make(0, .mark(label: "kickoff"), at: base + .seconds(3), signer: ids[0])
        try lan.make(1, .mark(label: "kickoff"), at: base + .milliseconds(5_500), signer: ids[1])
        let report = lan.outputs[0].compactMap { if case .offsetsChanged(let r) = $0 { r } else { nil } }.last
        let two = report?.entries.first { $0.member.nick == "two" }
        #expect(two?.behindReader == .milliseconds(2_500))
        #expect(report?.entries.first { $0.member.nick == "three" }?.offset == nil)
    }

    @Test func ignoredLabelsAreNotPromptedHere() throws {
        var lan = try lan()
        lan.rooms[0].ignore(label: CalibrationLabel("halftime")!)
        try lan.make(1, .calibrationEvent(label: "HALFTIME"), at: base + .seconds(1), signer: ids[1])
        #expect(!lan.outputs[0].contains { if case .calibrationEvent = $0 { true } else { false } })
        #expect(lan.outputs[2].contains { if case .calibrationEvent = $0 { true } else { false } })
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func aRestoreShowsNothingTwiceAndStillShowsWhatWasHeld(seed: UInt64) throws {
        var lan = try lan()
        try lan.make(0, .mark(label: "A"), at: base + .seconds(2), signer: ids[0])
        try lan.make(1, .mark(label: "A"), at: base + .seconds(4), signer: ids[1])
        try lan.make(0, .chat(text: "seen"), at: base + .seconds(10), signer: ids[0])
        lan.wakeAll(at: base + .seconds(12))
        try lan.make(0, .chat(text: "held when the node died"), at: base + .seconds(13), signer: ids[0])
        let shownOnTwo = Set(lan.messages(1).map(\.event.id))
        #expect(shownOnTwo.count == 1)

        // Node 2 restarts at base + 14 000 from its stored events.
        var restarted = RoomSession(room: "superbowl", reader: ids[1].id)
        // The store hands events back in any order.
        var random = SplitMix64(seed: seed)
        let stored = lan.rooms[1].log.delivered.shuffled(using: &random)
        let outputs = restarted.restore(stored, shown: shownOnTwo, now: base + .seconds(14))
        #expect(outputs.isEmpty)
        #expect(restarted.heldBackCount == 1)
        #expect(restarted.nextWake == base + .seconds(15))
        let later = restarted.wake(now: base + .seconds(15))
        #expect(later.count == 1)
        #expect(restarted.calibration == lan.rooms[1].calibration)
    }

    @Test func aLeaveIsShownOnceAndTakesTheMemberOutOfTheRoomEverywhere() throws {
        var lan = try lan()
        let two = Member(id: ids[1].id, nick: "two")
        #expect(lan.rooms[0].members.map(\.nick) == ["one", "three", "two"])
        let before = lan.outputs.map(\.count)
        try lan.make(1, .leave, at: base + .seconds(1), signer: ids[1])
        for reader in 0..<3 {
            let outputs = Array(lan.outputs[reader][before[reader]...])
            #expect(outputs.first == .left(two), "on \(reader): \(outputs)")
            #expect(outputs.filter { $0 == .left(two) }.count == 1)
            #expect(lan.rooms[reader].members.map(\.nick) == ["one", "three"])
        }

        // Back again: joined, and a member once more.
        try lan.make(1, .join(nick: "two"), at: base + .seconds(2), signer: ids[1])
        #expect(lan.outputs[0].last { if case .joined = $0 { true } else { false } } == .joined(two))
        #expect(lan.rooms[0].members.map(\.nick) == ["one", "three", "two"])
    }

    @Test func composeRefusesWhatTheWireWouldReject() {
        var room = RoomSession(room: "superbowl", reader: ids[0].id)
        let tooLong = String(repeating: "x", count: WireLimits.maxChatTextBytes + 1)
        #expect(throws: WireError.self) { try room.compose(.chat(text: tooLong), now: base, signer: ids[0]) }
        #expect(room.log.count == 0)
    }
}

/// What the console offers to mark, as a room's events arrive.
@Suite(.offThePool) struct RoomSessionMarkOfferTests {
    let me = NodeIdentity.generate()
    let bob = NodeIdentity.generate()
    let now = WallTime.milliseconds(sinceEpoch: 1_700_000_000_000)

    @Test func aPeersProposalIsOfferedUntilMarked() throws {
        var mine = RoomSession(room: "superbowl", reader: me.id)
        var bobs = RoomSession(room: "superbowl", reader: bob.id)
        func fromBob(_ body: EventBody, at time: WallTime) throws {
            let (event, _) = try bobs.compose(body, now: time, signer: bob)
            _ = mine.receive(event, now: time)
        }
        _ = try mine.compose(.join(nick: "me"), now: now, signer: me)
        try fromBob(.join(nick: "bob"), at: now)
        try fromBob(.calibrationEvent(label: "Kickoff"), at: now + .milliseconds(1))
        try fromBob(.mark(label: "kickoff"), at: now + .milliseconds(1))
        #expect(mine.markOffer(now: now + .milliseconds(2)) == .init(label: CalibrationLabel("kickoff")!, more: 0))
        _ = try mine.compose(.mark(label: "kickoff"), now: now + .milliseconds(3), signer: me)
        #expect(mine.markOffer(now: now + .milliseconds(4)) == nil)
        #expect(mine.calibration.isCalibrated(me.id))
    }

    @Test func ownProposalsAreNotOfferedAndRejoiningStartsAfresh() throws {
        var mine = RoomSession(room: "superbowl", reader: me.id)
        _ = try mine.compose(.join(nick: "me"), now: now, signer: me)
        _ = try mine.compose(.calibrationEvent(label: "halftime"), now: now + .milliseconds(1), signer: me)
        #expect(mine.markOffer(now: now + .milliseconds(2)) == nil, "she marks her own moment when she means to")
        _ = mine.receive(bob.event(1, .join(nick: "bob"), at: now + .milliseconds(2), for: mine), now: now + .milliseconds(2))
        _ = mine.receive(bob.event(2, .calibrationEvent(label: "kickoff"), at: now + .milliseconds(2), for: mine), now: now + .milliseconds(2))
        #expect(mine.markOffer(now: now + .milliseconds(2))?.label.normalized == "kickoff")
        _ = try mine.compose(.join(nick: "me"), now: now + .milliseconds(3), signer: me)
        #expect(mine.markOffer(now: now + .milliseconds(4)) == nil)
    }

    @Test func restoredProposalsAreOfferedOnlyWithinTheWindow() throws {
        var mine = RoomSession(room: "superbowl", reader: me.id)
        var events = [try mine.compose(.join(nick: "me"), now: now, signer: me).event]
        events.append(try mine.compose(.calibrationEvent(label: "kickoff"), now: now + .milliseconds(1), signer: me).event)
        events.append(bob.event(1, .join(nick: "bob"), at: now + .milliseconds(1), for: mine))
        events.append(bob.event(2, .calibrationEvent(label: "2nd half"), at: now + .milliseconds(1), for: mine))
        var restored = RoomSession(room: "superbowl", reader: me.id)
        _ = restored.restore(events, shown: [], now: now + .milliseconds(2))
        #expect(restored.markOffer(now: now + .milliseconds(2))?.label.normalized == "2nd half", "its own is never offered")
        #expect(restored.markOffer(now: now + .milliseconds(2) + PendingMarks.offerWindow) == nil)
    }
}
