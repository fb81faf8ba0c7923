import Testing

@testable import HuddleCore

/// A scoreboard that does not spoil: scores are held back like messages, so each reader sees the
/// score of its own stream's moment; of two conflicting scores the later game moment stands.
@Suite(.offThePool) struct ScoreboardTests {
    let reader = NodeIdentity.generate()
    let alice = NodeIdentity.generate()
    let bob = NodeIdentity.generate()
    let base = WallTime.milliseconds(sinceEpoch: 1_700_000_000_000)

    /// alice's stream is 2 s ahead of the reader's, bob's 1 s behind it.
    func calibratedRoom() throws -> (RoomSession, [NodeID: UInt64]) {
        var room = RoomSession(room: "superbowl", reader: reader.id)
        var seqs: [NodeID: UInt64] = [:]
        _ = try room.compose(.join(nick: "reader"), now: base, signer: reader)
        for (who, nick) in [(alice, "alice"), (bob, "bob")] {
            _ = receive(who, .join(nick: nick), at: base, into: &room, seqs: &seqs)
        }
        _ = receive(alice, .mark(label: "kickoff"), at: base + .seconds(1), into: &room, seqs: &seqs)
        _ = try room.compose(.mark(label: "kickoff"), now: base + .seconds(3), signer: reader)
        _ = receive(bob, .mark(label: "kickoff"), at: base + .seconds(4), into: &room, seqs: &seqs)
        #expect(room.calibration.lag(of: reader.id, behind: alice.id) == .seconds(2))
        #expect(room.calibration.lag(of: bob.id, behind: reader.id) == .seconds(1))
        return (room, seqs)
    }

    func receive(
        _ who: NodeIdentity, _ body: EventBody, at: WallTime, now: WallTime? = nil, into room: inout RoomSession,
        seqs: inout [NodeID: UInt64]
    ) -> [RoomOutput] {
        let seq = (seqs[who.id] ?? 0) + 1
        seqs[who.id] = seq
        return room.receive(who.event(seq, body, at: at, for: room), now: now ?? at)
    }

    func scores(_ outputs: [RoomOutput]) -> [ShownScore] {
        outputs.compactMap { if case .score(let score) = $0 { score } else { nil } }
    }

    @Test func aScoreFromAStreamAheadWaitsForTheReadersMoment() throws {
        var (room, seqs) = try calibratedRoom()
        let t = base + .seconds(10)
        #expect(receive(alice, .score(home: 7, guest: 0), at: t, into: &room, seqs: &seqs).isEmpty)
        #expect(room.scoreboard == nil)
        #expect(room.wake(now: t + .milliseconds(1_999)).isEmpty)
        let released = scores(room.wake(now: t + .seconds(2)))
        try #require(released.count == 1)
        let shown = released[0]
        #expect(shown.home == 7 && shown.guest == 0 && shown.held == .seconds(2) && !shown.isCorrection)
        #expect(room.scoreboard?.home == 7 && room.scoreboard?.by.nick == "alice")
    }

    @Test func ofTwoConflictingScoresTheLaterGameMomentStandsAndTheOtherIsACorrection() throws {
        var (room, seqs) = try calibratedRoom()
        let t = base + .seconds(10)
        // alice (2 s ahead) saw 14-10 at game moment t; it reaches the reader's stream at t + 2 000.
        #expect(receive(alice, .score(home: 14, guest: 10), at: t, into: &room, seqs: &seqs).isEmpty)
        #expect(scores(room.wake(now: t + .seconds(2))).map(\.guest) == [10])
        // bob (3 s behind alice) said 14-7 at game moment t − 1 000; it arrives late, at t + 5 000.
        let late = scores(receive(bob, .score(home: 14, guest: 7), at: t + .seconds(2), now: t + .seconds(5), into: &room, seqs: &seqs))
        try #require(late.count == 1)
        #expect(late[0].guest == 7 && late[0].isCorrection)
        #expect(room.scoreboard?.guest == 10 && room.scoreboard?.by.nick == "alice")
    }

    @Test func teamsNameTheScoreboardAndARestartKeepsTheStandingScore() throws {
        var (room, seqs) = try calibratedRoom()
        let t = base + .seconds(10)
        _ = receive(bob, .teams(home: "Chiefs", guest: "Eagles"), at: t, into: &room, seqs: &seqs)
        let immediate = scores(receive(bob, .score(home: 3, guest: 0), at: t + .milliseconds(100), into: &room, seqs: &seqs))
        try #require(immediate.count == 1)
        let shown = immediate[0]
        #expect(shown.homeName == "Chiefs" && shown.guestName == "Eagles")
        #expect(room.scoreboard?.teams?.home == "Chiefs")

        var restored = RoomSession(room: "superbowl", reader: reader.id)
        let outputs = restored.restore(room.log.delivered, shown: [shown.event.id], now: t + .seconds(5))
        #expect(scores(outputs).isEmpty)
        #expect(restored.scoreboard?.home == 3 && restored.scoreboard?.teams?.guest == "Eagles")
    }

    @Test func scoresArePausedLikeMessages() throws {
        var (room, seqs) = try calibratedRoom()
        let t = base + .seconds(10)
        room.pause()
        #expect(receive(bob, .score(home: 1, guest: 0), at: t, into: &room, seqs: &seqs).isEmpty)
        #expect(scores(room.resume(now: t + .milliseconds(10))).map(\.home) == [1])
    }

    @Test func twoNamingsAtOneMomentEndTheSameWhateverTheOrder() throws {
        let t = base + .seconds(10)
        var names: [String] = []
        for order in [[alice, bob], [bob, alice]] {
            var (room, seqs) = try calibratedRoom()
            for who in order {
                _ = receive(who, .teams(home: who.id == alice.id ? "Chiefs" : "KC", guest: "Eagles"), at: t, into: &room, seqs: &seqs)
            }
            names.append(try #require(room.teams?.home))
        }
        #expect(names[0] == names[1])
    }
}
