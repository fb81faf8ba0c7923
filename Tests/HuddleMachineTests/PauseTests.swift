import Testing

@testable import HuddleCore

/// A viewer pauses its stream and plays it again: nothing shows meanwhile, and the paused span,
/// composed as the reader's delay nudge, moves every held message that much later.
@Suite(.offThePool) struct PauseTests {
    let reader = NodeIdentity.generate()
    let alice = NodeIdentity.generate()
    let base = WallTime.milliseconds(sinceEpoch: 1_700_000_000_000)

    /// A room where alice's stream is 2 s ahead of the reader's.
    func calibratedRoom() throws -> RoomSession {
        var room = RoomSession(room: "superbowl", reader: reader.id)
        _ = try room.compose(.join(nick: "reader"), now: base, signer: reader)
        _ = room.receive(sign(alice, 1, .join(nick: "alice"), at: base, room: room), now: base)
        _ = room.receive(sign(alice, 2, .mark(label: "kickoff"), at: base + .seconds(1), room: room), now: base + .seconds(1))
        _ = try room.compose(.mark(label: "kickoff"), now: base + .seconds(3), signer: reader)
        #expect(room.calibration.lag(of: reader.id, behind: alice.id) == .seconds(2))
        return room
    }

    func sign(_ who: NodeIdentity, _ seq: UInt64, _ body: EventBody, at: WallTime, room: RoomSession) -> Event {
        who.event(seq, body, at: at, for: room)
    }

    func texts(_ outputs: [RoomOutput]) -> [String] {
        outputs.compactMap { if case .message(let message) = $0 { message.text } else { nil } }
    }

    @Test func nothingShowsWhilePausedAndTheSpanMovesEveryHeldMessage() throws {
        var room = try calibratedRoom()
        let t = base + .seconds(10)
        // Held 2 s: due at t + 2 000.
        #expect(room.receive(sign(alice, 3, .chat(text: "before"), at: t, room: room), now: t).isEmpty)

        room.pause()
        #expect(room.isPaused && room.nextWake == nil)
        #expect(room.wake(now: t + .milliseconds(2_500)).isEmpty)
        // Written while the reader is paused, due (by the old offsets) at t + 3 000: still held.
        #expect(room.receive(sign(alice, 4, .chat(text: "during"), at: t + .seconds(1), room: room), now: t + .milliseconds(3_500)).isEmpty)
        // The reader's own message still shows at once.
        #expect(texts(try room.compose(.chat(text: "brb"), now: t + .seconds(4), signer: reader).outputs) == ["brb"])

        // Paused from t + 1 000 to t + 6 000: 5 s more behind alice.
        _ = try room.compose(.delayNudge(milliseconds: 5_000), now: t + .seconds(6), signer: reader)
        #expect(room.calibration.lag(of: reader.id, behind: alice.id) == .seconds(7))
        #expect(room.resume(now: t + .seconds(6)).isEmpty)
        #expect(!room.isPaused && room.nextWake == t + .seconds(7))
        #expect(room.wake(now: t + .milliseconds(6_999)).isEmpty)
        let shown = room.wake(now: t + .seconds(7))
        #expect(texts(shown) == ["before"])
        #expect(texts(room.wake(now: t + .seconds(8))) == ["during"])
        #expect(room.heldBackCount == 0)
    }

    @Test func resumingWithoutANudgeShowsWhatCameDueMeanwhile() throws {
        var room = try calibratedRoom()
        let t = base + .seconds(10)
        _ = room.receive(sign(alice, 3, .chat(text: "due while paused"), at: t, room: room), now: t)
        room.pause()
        #expect(room.wake(now: t + .seconds(5)).isEmpty)
        #expect(texts(room.resume(now: t + .seconds(5))) == ["due while paused"])
    }
}
