import Testing

@testable import HuddleCore

/// What a person is told, and when not: a late joiner catches up in one block, offsets are
/// announced when they change noticeably, a proposer is not offered her own moment, a stray
/// mark is said once.
@Suite struct RoomSessionQuietTests {
    let alice = NodeIdentity.generate()
    let bob = NodeIdentity.generate()
    let carol = NodeIdentity.generate()
    let base: Int64 = 1_700_000_000_000

    /// alice's room with bob calibrated 3 s behind her and a few messages.
    func busyRoom() throws -> RoomSession {
        var room = RoomSession(room: "superbowl", reader: alice.id)
        _ = try room.compose(.join(nick: "alice"), now: base, signer: alice)
        _ = room.receive(bob.event(1, .join(nick: "bob"), at: base, for: room), now: base)
        _ = try room.compose(.calibrationEvent(label: "kickoff"), now: base + 1_000, signer: alice)
        _ = try room.compose(.mark(label: "kickoff"), now: base + 2_000, signer: alice)
        _ = room.receive(bob.event(2, .mark(label: "kickoff"), at: base + 5_000, for: room), now: base + 5_000)
        for i in 0..<5 {
            _ = try room.compose(.chat(text: "alice \(i)"), now: base + 10_000 + Int64(i) * 1_000, signer: alice)
            _ = room.receive(
                bob.event(UInt64(3 + i), .chat(text: "bob \(i)"), at: base + 13_500 + Int64(i) * 1_000, for: room),
                now: base + 13_500 + Int64(i) * 1_000)
        }
        return room
    }

    @Test func aLateJoinerCatchesUpInOneBlockWithTheOffsetsOnce() throws {
        let history = try busyRoom()
        // Two minutes after kickoff was proposed: within the three minutes a live proposal is
        // offered, past the 90 s a proposal found in the history is.
        let now = base + 120_000
        var carolRoom = RoomSession(room: "superbowl", reader: carol.id)
        _ = try carolRoom.compose(.join(nick: "carol"), now: now, signer: carol)
        // The pull brings the room's history in one batch, in causal order.
        let (_, outputs) = carolRoom.ingest(history.log.delivered, now: now + 50)
        let blocks = outputs.compactMap { if case .earlier(let messages) = $0 { messages } else { nil } }
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
        #expect(carolRoom.markOffer(now: now + 50) == nil)
    }

    @Test func aMessageWrittenAfterTheWriterSawTheJoinIsNews() throws {
        var room = try busyRoom()
        var carolRoom = RoomSession(room: "superbowl", reader: carol.id)
        let (join, _) = try carolRoom.compose(.join(nick: "carol"), now: base + 60_000, signer: carol)
        _ = carolRoom.ingest(room.log.delivered, now: base + 60_050)
        _ = room.receive(join, now: base + 60_010)
        let (hello, _) = try room.compose(.chat(text: "hi carol"), now: base + 61_000, signer: alice)
        let outputs = carolRoom.receive(hello, now: base + 61_001)
        #expect(outputs.contains { if case .message(let message) = $0 { message.text == "hi carol" } else { false } })
    }

    @Test func theProposerIsNotOfferedHerOwnMoment() throws {
        var room = RoomSession(room: "superbowl", reader: alice.id)
        _ = try room.compose(.join(nick: "alice"), now: base, signer: alice)
        _ = try room.compose(.calibrationEvent(label: "kickoff"), now: base + 1_000, signer: alice)
        #expect(room.markOffer(now: base + 2_000) == nil)
        #expect(room.labels.contains(CalibrationLabel("kickoff")!), "still there for /now kickoff and Tab")
        // bob's proposal is offered to her.
        _ = room.receive(bob.event(1, .join(nick: "bob"), at: base, for: room), now: base)
        _ = room.receive(bob.event(2, .calibrationEvent(label: "first down"), at: base + 3_000, for: room), now: base + 3_000)
        #expect(room.markOffer(now: base + 4_000)?.label.normalized == "first down")
    }

    /// alice's room, where bob has joined; `bobSays` delivers bob's next event and returns what
    /// alice was shown.
    final class AliceHearsBob {
        var room: RoomSession
        let bob: NodeIdentity
        private var seq: UInt64 = 1

        init(alice: NodeIdentity, bob: NodeIdentity, at base: Int64) throws {
            room = RoomSession(room: "superbowl", reader: alice.id)
            self.bob = bob
            _ = try room.compose(.join(nick: "alice"), now: base, signer: alice)
            _ = bobSays(.join(nick: "bob"), at: base)
        }

        func bobSays(_ body: EventBody, at: Int64) -> [RoomOutput] {
            defer { seq += 1 }
            return room.receive(bob.event(seq, body, at: at, for: room), now: at)
        }
    }

    @Test func offsetsAreToldWhenTheyChangeByATenthOfASecondOrMore() throws {
        let talk = try AliceHearsBob(alice: alice, bob: bob, at: base)
        func noticed(_ outputs: [RoomOutput]) -> Set<NodeID> {
            outputs.reduce(into: Set<NodeID>()) { if case .offsetsChanged(let report) = $1 { $0.formUnion(report.noticed) } }
        }
        _ = try talk.room.compose(.mark(label: "A"), now: base + 10_000, signer: alice)
        #expect(noticed(talk.bobSays(.mark(label: "A"), at: base + 13_000)) == [bob.id, alice.id])
        // A second moment 40 ms off refits bob to 3 020 ms: not worth a line.
        _ = try talk.room.compose(.mark(label: "B"), now: base + 30_000, signer: alice)
        let small = talk.bobSays(.mark(label: "B"), at: base + 33_040)
        #expect(talk.room.calibration.offset(of: bob.id) == 3_020)
        #expect(small.contains { if case .offsetsChanged = $0 { true } else { false } }, "scripts still get it")
        #expect(noticed(small).isEmpty)
        // A nudge of half a second is.
        #expect(noticed(talk.bobSays(.delayNudge(milliseconds: 500), at: base + 40_000)) == [bob.id])
    }

    @Test func aStrayMarkIsSaidOnce() throws {
        let talk = try AliceHearsBob(alice: alice, bob: bob, at: base)
        for (label, at) in [("kickoff", 10_000), ("end of q1", 400_000)] {
            _ = try talk.room.compose(.mark(label: label), now: base + Int64(at), signer: alice)
            _ = talk.bobSays(.mark(label: label), at: base + Int64(at) + 3_000)
        }
        var setAside = talk.bobSays(.mark(label: "first down"), at: base + 430_000)
        setAside += try talk.room.compose(.mark(label: "first down"), now: base + 517_000, signer: alice).outputs
        let said = setAside.filter { if case .markSetAside = $0 { true } else { false } }
        #expect(said == [.markSetAside(talk.room.member(bob.id), label: "first down")])
        #expect(talk.room.calibration.offset(of: bob.id) == 3_000)
        // bob takes it back: the suspect is gone, nothing else changes.
        _ = talk.bobSays(.unmark(label: "first down"), at: base + 520_000)
        #expect(talk.room.calibration.suspects.isEmpty)
        #expect(talk.room.calibration.offset(of: bob.id) == 3_000)
    }
}
