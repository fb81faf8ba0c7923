import Testing

@testable import HuddleCore

/// What a reader sees when a peer equivocates, or sends what can never be shown.
@Suite(.offThePool) struct RoomSessionFaultTests {
    let reader = NodeIdentity.generate()
    let mallory = NodeIdentity.generate()
    let base = WallTime.milliseconds(sinceEpoch: 1_700_000_000_000)

    /// A room where mallory's stream is 2 s ahead of the reader's, so its chat is held 2 s.
    func calibratedRoom() throws -> RoomSession {
        var room = RoomSession(room: "superbowl", reader: reader.id)
        _ = try room.compose(.join(nick: "reader"), now: base, signer: reader)
        _ = room.receive(sign(mallory, 1, .join(nick: "mallory"), at: base, room: room), now: base)
        _ = try room.compose(.mark(label: "kickoff"), now: base + .seconds(4), signer: reader)
        _ = room.receive(sign(mallory, 2, .mark(label: "kickoff"), at: base + .seconds(2), room: room), now: base + .seconds(4))
        #expect(room.calibration.lag(of: reader.id, behind: mallory.id) == .seconds(2))
        return room
    }

    func sign(_ who: NodeIdentity, _ seq: UInt64, _ body: EventBody, at: WallTime, room: RoomSession) -> Event {
        who.event(seq, body, at: at, for: room)
    }

    @Test func aHeldMessageOfAnEquivocatorIsNeverShownAndTheReaderIsToldOnce() throws {
        var room = try calibratedRoom()
        let t = base + .seconds(10)
        let x = sign(mallory, 3, .chat(text: "7-0"), at: t, room: room)
        let y = sign(mallory, 3, .chat(text: "0-7"), at: t, room: room)
        #expect(room.receive(x, now: t).isEmpty)
        #expect(room.heldBackCount == 1)

        let (outcome, outputs) = room.ingest(y, now: t + .milliseconds(500))
        guard case .equivocation(let proof, _) = outcome else {
            Issue.record("no proof from two versions of mallory#3")
            return
        }
        #expect(outputs.first == .equivocated(room.member(mallory.id), seq: 3))
        #expect(room.heldBackCount == 0)
        #expect(room.wake(now: t + .seconds(5)).isEmpty)
        // The proof comes back after a restart: nothing of mallory's from #3 on.
        var restored = RoomSession(room: "superbowl", reader: reader.id)
        let outputsAfterRestart = restored.restore(room.log.delivered + [x], faults: [proof], shown: [], now: t + .seconds(6))
        #expect(!outputsAfterRestart.contains { if case .message = $0 { true } else { false } })
        #expect(restored.log.faults[mallory.id] == proof)
        #expect(restored.log.vector[mallory.id] == 2)
    }

    @Test func anEventThatCanNeverBeShownIsGivenUpOnAndCounted() throws {
        var room = try calibratedRoom()
        var context = room.log.deliveredVector
        context[mallory.id] = 2
        context[NodeIdentity.generate().id] = 999
        let stuck = mallory.sign(
            id: EventID(origin: mallory.id, seq: 3), room: "superbowl", createdAt: base + .seconds(5), context: context,
            body: .chat(text: "never"))
        _ = room.receive(stuck, now: base + .seconds(5))
        #expect(room.nextWake == base + .seconds(65))
        _ = room.wake(now: base + .seconds(65))
        #expect(room.tally.abandoned == 1)
        #expect(room.log.waitingCount == 0)
        #expect(room.nextWake == nil)
    }

    @Test func eventsPastAGapThatExpireAreHandedOutOnceForDeletion() throws {
        var room = try calibratedRoom()
        let stray = mallory.sign(
            id: EventID(origin: mallory.id, seq: 9), room: "superbowl", createdAt: base, context: [mallory.id: 8],
            body: .chat(text: "past a gap"))
        _ = room.receive(stray, now: base + .seconds(10))
        _ = room.wake(now: base + .seconds(70))
        #expect(room.tally.droppedAhead == 1)
        #expect(room.takeDiscarded() == [stray.id])
        #expect(room.takeDiscarded().isEmpty)
        #expect(!room.log.contains(stray.id))
    }

    /// A signed mark may carry any i64 ms as its time: one from the earliest moment the wire can
    /// name is no offer to mark (it is long over), and reading the offer must not trap (it did
    /// while the reader's clock minus the proposal's was a plain Int64 subtraction).
    @Test func aMarkFromTheBeginningOfTimeIsNoOfferAndNoCrash() throws {
        var room = RoomSession(room: "superbowl", reader: reader.id)
        _ = try room.compose(.join(nick: "reader"), now: base, signer: reader)
        _ = room.receive(.fixture(mallory.id, 1, .join(nick: "mallory"), at: base), now: base)
        let ancient = Event.fixture(mallory.id, 2, .mark(label: "kickoff"), atMilliseconds: .min)
        _ = room.receive(ancient, now: base + .seconds(1))
        #expect(room.labels.contains(CalibrationLabel("kickoff")!))
        #expect(room.markOffer(now: base + .seconds(1)) == nil)
        // One from the latest moment it can name is offered, as a proposal arrived now is.
        _ = room.receive(.fixture(mallory.id, 3, .mark(label: "halftime"), atMilliseconds: .max), now: base + .seconds(2))
        #expect(room.markOffer(now: base + .seconds(2))?.label == CalibrationLabel("halftime"))
    }
}
