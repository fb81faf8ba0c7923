import Testing

@testable import HuddleCore

/// What a person is told, and when not: a late joiner catches up in one block, offsets are
/// announced when they change noticeably, a proposer is not offered her own moment, a stray
/// mark is said once.
@Suite(.offThePool) struct RoomSessionQuietTests {
    let alice = NodeIdentity.generate()
    let bob = NodeIdentity.generate()
    let carol = NodeIdentity.generate()
    let base = WallTime.milliseconds(sinceEpoch: 1_700_000_000_000)

    /// alice's room with bob calibrated 3 s behind her and a few messages.
    func busyRoom() throws -> RoomSession {
        try RoomSession.busy(alice: alice, bob: bob, base: base)
    }

    @Test func aLateJoinerCatchesUpInOneBlockWithTheOffsetsOnce() throws {
        let history = try busyRoom()
        // Two minutes after kickoff was proposed: within the three minutes a live proposal is
        // offered, past the 90 s a proposal found in the history is.
        let now = base + .seconds(120)
        var carolRoom = RoomSession(room: "superbowl", reader: carol.id)
        _ = try carolRoom.compose(.join(nick: "carol"), now: now, signer: carol)
        // The pull brings the room's history in one batch, in causal order.
        let (_, outputs) = carolRoom.ingest(history.log.delivered, now: now + .milliseconds(50))
        let blocks = outputs.compactMap { output -> [ShownMessage]? in
            guard case .earlier(let items) = output else { return nil }
            return items.compactMap { if case .message(let message) = $0 { message } else { nil } }
        }
        #expect(blocks.count == 1)
        #expect(blocks.first?.count == 10)
        // Ordered as they were shown to carol: by game time on her (uncalibrated) reading.
        #expect(Set(blocks.first?.map(\.text) ?? []) == Set((0..<5).flatMap { ["alice \($0)", "bob \($0)"] }))
        let reports = outputs.filter { if case .offsetsChanged = $0 { true } else { false } }
        #expect(reports.count == 1, "the offsets as they stand, once")
        #expect(!outputs.contains { if case .joined = $0 { true } else { false } }, "no line per past join")
        #expect(!outputs.contains { if case .mark = $0 { true } else { false } }, "no line per past mark")
        #expect(!outputs.contains { if case .message = $0 { true } else { false } })
        // kickoff was proposed two minutes ago: over on every stream, not offered.
        #expect(carolRoom.markOffer(now: now + .milliseconds(50)) == nil)
    }

    @Test func aMessageWrittenAfterTheWriterSawTheJoinIsNews() throws {
        var room = try busyRoom()
        // The shield off: carol is not placed, and this is about which words are news.
        var carolRoom = RoomSession(room: "superbowl", reader: carol.id, shield: nil)
        let (join, _) = try carolRoom.compose(.join(nick: "carol"), now: base + .seconds(60), signer: carol)
        _ = carolRoom.ingest(room.log.delivered, now: base + .milliseconds(60_050))
        _ = room.receive(join, now: base + .milliseconds(60_010))
        let (hello, _) = try room.compose(.chat(text: "hi carol"), now: base + .seconds(61), signer: alice)
        let outputs = carolRoom.receive(hello, now: base + .milliseconds(61_001))
        #expect(outputs.contains { if case .message(let message) = $0 { message.text == "hi carol" } else { false } })
    }

    @Test func theProposerIsNotOfferedHerOwnMoment() throws {
        var room = RoomSession(room: "superbowl", reader: alice.id)
        _ = try room.compose(.join(nick: "alice"), now: base, signer: alice)
        _ = try room.compose(.calibrationEvent(label: "kickoff"), now: base + .seconds(1), signer: alice)
        #expect(room.markOffer(now: base + .seconds(2)) == nil)
        #expect(room.labels.contains(CalibrationLabel("kickoff")!), "still there for /now kickoff and Tab")
        // bob's proposal is offered to her.
        _ = room.receive(bob.event(1, .join(nick: "bob"), at: base, for: room), now: base)
        _ = room.receive(bob.event(2, .calibrationEvent(label: "2nd half"), at: base + .seconds(3), for: room), now: base + .seconds(3))
        #expect(room.markOffer(now: base + .seconds(4))?.label.normalized == "2nd half")
    }

    @Test func offsetsAreToldWhenTheyChangeByATenthOfASecondOrMore() throws {
        let talk = try ReaderHearsPeer(reader: alice, "alice", peer: bob, "bob", at: base)
        func noticed(_ outputs: [RoomOutput]) -> Set<NodeID> {
            outputs.reduce(into: Set<NodeID>()) { if case .offsetsChanged(let report) = $1 { $0.formUnion(report.noticed) } }
        }
        _ = try talk.room.compose(.mark(label: "A"), now: base + .seconds(10), signer: alice)
        #expect(noticed(talk.peerSays(.mark(label: "A"), at: base + .seconds(13))) == [bob.id, alice.id])
        // A second moment 40 ms off refits bob to 3 020 ms: not worth a line.
        _ = try talk.room.compose(.mark(label: "B"), now: base + .seconds(30), signer: alice)
        let small = talk.peerSays(.mark(label: "B"), at: base + .milliseconds(33_040))
        #expect(talk.room.calibration.offset(of: bob.id) == .milliseconds(3_020))
        #expect(small.contains { if case .offsetsChanged = $0 { true } else { false } }, "scripts still get it")
        #expect(noticed(small).isEmpty)
        // A nudge of half a second is.
        #expect(noticed(talk.peerSays(.delayNudge(milliseconds: 500), at: base + .seconds(40))) == [bob.id])
    }

    @Test func aStrayMarkIsSaidOnce() throws {
        let talk = try ReaderHearsPeer(reader: alice, "alice", peer: bob, "bob", at: base)
        for (label, at) in [("kickoff", 10_000), ("end of q1", 400_000)] {
            _ = try talk.room.compose(.mark(label: label), now: base + .milliseconds(at), signer: alice)
            _ = talk.peerSays(.mark(label: label), at: base + .milliseconds(at) + .seconds(3))
        }
        var setAside = talk.peerSays(.mark(label: "first down"), at: base + .seconds(430))
        setAside += try talk.room.compose(.mark(label: "first down"), now: base + .seconds(517), signer: alice).outputs
        let said = setAside.filter { if case .markSetAside = $0 { true } else { false } }
        #expect(said == [.markSetAside(talk.room.member(bob.id), label: "first down")])
        #expect(talk.room.calibration.offset(of: bob.id) == .seconds(3))
        // bob takes it back: the suspect is gone, nothing else changes.
        _ = talk.peerSays(.unmark(label: "first down"), at: base + .seconds(520))
        #expect(talk.room.calibration.suspects.isEmpty)
        #expect(talk.room.calibration.offset(of: bob.id) == .seconds(3))
    }
}
