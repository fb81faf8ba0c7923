import Testing

@testable import HuddleCore

extension CalibrationRoomScript {
    /// `node` publishes that `peer` heard the moment `at` (on `node`'s clock) `lag` ms later on
    /// the peer's clock, with the matcher's `confidence`.
    mutating func heard(_ node: NodeID, _ peer: NodeID, at: WallTime, lag: Double, confidence: Double = 60) {
        let match = HeardMatch(peer: peer, at: at, lag: .milliseconds(lag), confidence: confidence)
        add(node, .heard(match), at: at + .seconds(2))  // published a little after the sound
    }
}

/// Offsets from sound: a heard match is an edge between two viewers with its own σ; the fit is
/// weighted; sound outvotes a thumb; a match that differs is a step. Every figure here is what a
/// viewer would see (`offset`, `holdBack`).
@Suite(.offThePool) struct CalibrationSoundTests {
    let alice = NodeID.fixture(1)
    let bob = NodeID.fixture(2)
    let carol = NodeID.fixture(3)
    let dave = NodeID.fixture(4)

    func joined(_ nodes: NodeID...) -> CalibrationRoomScript {
        var room = CalibrationRoomScript()
        for node in nodes { room.join(node) }
        return room
    }

    // MARK: Sound alone

    @Test func nobodyMarksAndTheTouchdownIsHeldForEachViewer() throws {
        // The e2e in the core: bob's stream 3.2 s behind alice's, carol's 7.5 s; nobody
        // marks. alice's node matched its sound against each of theirs.
        var room = joined(alice, bob, carol)
        room.heard(alice, bob, at: .epoch + .seconds(100), lag: 3_200.4)
        room.heard(alice, carol, at: .epoch + .seconds(100), lag: 7_499.6)
        let calibration = room.calibration
        #expect(calibration.offset(of: alice) == .zero)
        #expect(calibration.offset(of: bob) == .milliseconds(3_200))
        #expect(calibration.offset(of: carol) == .milliseconds(7_500))
        #expect(calibration.holdBack(from: alice, to: bob) == .milliseconds(3_200))
        #expect(calibration.holdBack(from: alice, to: carol) == .milliseconds(7_500))
        #expect(calibration.holdBack(from: bob, to: carol) == .milliseconds(4_300))
        #expect(calibration.holdBack(from: carol, to: alice) == .zero)
        let sound = try #require(calibration.placement(of: bob)?.sound)
        #expect(sound.matches == 1 && sound.confidence == 60 && sound.sigma == .milliseconds(15))
    }

    @Test func bothSidesPublishingAgreeAndTheClocksDifferenceCancels() {
        // bob's machine clock runs 5 minutes ahead of alice's: every lag includes it, and so does
        // every mark, so hold-back in bob's clock still comes out at 3.2 s of stream.
        var room = joined(alice, bob)
        let skew = TimeSpan.seconds(300)
        room.heard(alice, bob, at: .epoch + .seconds(100), lag: skew.fractionalMilliseconds + 3_200)
        room.heard(
            bob, alice, at: .epoch + .seconds(100) + skew + .milliseconds(3_200),
            lag: -skew.fractionalMilliseconds - 3_200)
        let calibration = room.calibration
        #expect(calibration.lag(of: bob, behind: alice) == skew + .milliseconds(3_200))
        // alice writes at 200 000 on her clock: bob's clock reads 503 200 when his stream gets there.
        let message = Event.fixture(alice, 9, .chat(text: "TOUCHDOWN"), at: .epoch + .seconds(200))
        #expect(calibration.dueTime(of: message, for: bob) == .epoch + .seconds(200) + skew + .milliseconds(3_200))
    }

    @Test func aWeakMatchIsNoMatch() {
        var room = joined(alice, bob)
        room.heard(alice, bob, at: .epoch + .seconds(100), lag: 3_200, confidence: 8.9)
        #expect(room.calibration == .none)
        room.heard(alice, bob, at: .epoch + .seconds(130), lag: 3_200, confidence: 9)
        #expect(room.calibration.offset(of: bob) == .milliseconds(3_200))
    }

    @Test func aMatchAboutSomeoneNotInTheRoomOrAboutOneselfCountsForNothing() {
        var room = joined(alice, bob)
        room.heard(alice, carol, at: .epoch + .seconds(100), lag: 1_000)  // carol never joined
        room.heard(alice, alice, at: .epoch + .seconds(100), lag: 1_000)
        #expect(room.calibration == .none)
        room.leave(bob, at: .epoch + .seconds(50))
        room.heard(alice, bob, at: .epoch + .seconds(100), lag: 3_200)  // bob left
        #expect(room.calibration == .none)
    }

    @Test func aMatchFromBeforeThePeerRejoinedCountsForNothing() {
        var room = joined(alice, bob)
        room.heard(alice, bob, at: .epoch + .seconds(100), lag: 3_200)
        #expect(room.calibration.offset(of: bob) == .milliseconds(3_200))
        room.join(bob, at: .epoch + .seconds(200))  // bob re-joins: his calibration starts over
        #expect(room.calibration == .none)
        room.heard(alice, bob, at: .epoch + .seconds(250), lag: 4_100)
        #expect(room.calibration.offset(of: bob) == .milliseconds(4_100))
    }

    // MARK: Sound and thumbs in one fit

    @Test func onlyTapsGiveWhatTheyAlwaysGave() {
        // The worked example, with a match between two other viewers in the room: the tap-only
        // group's offsets are exactly the tree rule's.
        var room = joined(alice, bob, carol)
        room.mark(alice, "A", at: .epoch + .seconds(2))
        room.mark(bob, "A", at: .epoch + .seconds(4))
        room.mark(carol, "B", at: .epoch + .seconds(6))
        room.mark(bob, "B", at: .epoch + .seconds(10))
        #expect(room.calibration.offset(of: bob) == .seconds(2))
        #expect(room.calibration.offset(of: carol) == .seconds(-2))
        #expect(room.calibration.placement(of: bob)?.sound == nil)
    }

    @Test func aMatchOutweighsTaps() {
        // Two taps say 3.35 s (bob late on the key by 150 ms); the sound says 3.2 s. σ 15 ms
        // against 200 ms: the fit is the sound's to within a millisecond, not the mean of the two.
        var room = joined(alice, bob)
        room.mark(alice, "kickoff", at: .epoch + .seconds(100))
        room.mark(bob, "kickoff", at: .epoch + .milliseconds(103_350))
        room.heard(alice, bob, at: .epoch + .seconds(110), lag: 3_200)
        let offset = room.calibration.offset(of: bob)!
        #expect((offset - .milliseconds(3_200)).magnitude <= .milliseconds(1), "offset \(offset)")
    }

    @Test func tapsJoinAViewerWhoDoesNotListenToTheOnesWhoDo() {
        // alice and bob listen; carol does not, and taps kickoff with alice.
        var room = joined(alice, bob, carol)
        room.heard(alice, bob, at: .epoch + .seconds(90), lag: 3_200)
        room.mark(alice, "kickoff", at: .epoch + .seconds(100))
        room.mark(carol, "kickoff", at: .epoch + .seconds(105))
        let calibration = room.calibration
        #expect(calibration.offset(of: bob) == .milliseconds(3_200))
        #expect(calibration.offset(of: carol) == .seconds(5))
        #expect(calibration.holdBack(from: bob, to: carol) == .milliseconds(1_800))
        #expect(calibration.placement(of: carol)?.sound == nil)
    }

    // MARK: A stray thumb against good sound

    /// alice and bob hear each other every 30 s from 100 s to 220 s on alice's clock; bob is
    /// 3.2 s behind.
    func listening() -> CalibrationRoomScript {
        var room = joined(alice, bob)
        for k in 0..<5 { room.heard(alice, bob, at: .milliseconds(sinceEpoch: 100_000 + Int64(k) * 30_000), lag: 3_200) }
        return room
    }

    @Test func aTapSecondsOffBetweenMatchesIsSetAsideNotAStep() throws {
        var room = listening()
        room.mark(alice, "first down", at: .epoch + .seconds(150))
        room.mark(bob, "first down", at: .epoch + .milliseconds(156_300))  // 3.1 s later than his stream showed it
        let calibration = room.calibration
        let placement = try #require(calibration.placement(of: bob))
        #expect(placement.offset == .milliseconds(3_200) && placement.steps == 0)
        #expect(calibration.suspects.map(\.label) == ["first down"])
    }

    @Test func aTapSecondsOffBeforeAnySoundIsSetAsideNotTakenAsTheLagSoundStepsFrom() throws {
        var room = joined(alice, bob)
        room.mark(alice, "kickoff", at: .epoch + .seconds(50))
        room.mark(bob, "kickoff", at: .epoch + .milliseconds(56_500))  // says 6.5 s
        for k in 0..<3 { room.heard(alice, bob, at: .milliseconds(sinceEpoch: 100_000 + Int64(k) * 30_000), lag: 3_200) }
        let placement = try #require(room.calibration.placement(of: bob))
        #expect(placement.offset == .milliseconds(3_200) && placement.steps == 0)
        #expect(room.calibration.suspects.map(\.label) == ["kickoff"])
    }

    @Test func aTapSecondsOffAfterTheLastMatchIsSetAside() throws {
        var room = listening()
        room.mark(alice, "field goal", at: .epoch + .seconds(300))
        room.mark(bob, "field goal", at: .epoch + .seconds(301))  // says 1 s
        let placement = try #require(room.calibration.placement(of: bob))
        #expect(placement.offset == .milliseconds(3_200) && placement.steps == 0)
    }

    @Test func twoTapsThatAgreeAfterTheSoundStoppedAreAStep() throws {
        // bob stopped listening; then his stream rebuffered 4 s, and two marks say so.
        var room = listening()
        room.mark(alice, "field goal", at: .epoch + .seconds(300))
        room.mark(bob, "field goal", at: .epoch + .milliseconds(307_200))
        room.mark(alice, "touchdown", at: .epoch + .seconds(400))
        room.mark(bob, "touchdown", at: .epoch + .milliseconds(407_200))
        let placement = try #require(room.calibration.placement(of: bob))
        #expect(placement.offset == .milliseconds(7_200) && placement.steps == 1)
        #expect(placement.sound == nil, "the latest piece is the taps'")
    }

    // MARK: Streams that change

    @Test func aMatchThatDiffersIsAStepAtOnce() throws {
        // Two seconds of silence spliced into bob's stream after 220 s: the next match says 5.2 s.
        var room = listening()
        room.heard(alice, bob, at: .epoch + .seconds(250), lag: 5_200)
        let placement = try #require(room.calibration.placement(of: bob))
        #expect(placement.offset == .milliseconds(5_200) && placement.steps == 1)
        #expect(placement.sound?.stepHeard == true)
        #expect(placement.sound?.matches == 1)
        // Messages alice wrote before the rebuffer keep their moment: the timeline steps at the
        // moment bob's clock heard the differing match.
        #expect(placement.offset(at: .epoch + .seconds(200)) == .milliseconds(3_200))
        #expect(placement.offset(at: .epoch + .milliseconds(255_200)) == .milliseconds(5_200))
        room.heard(alice, bob, at: .epoch + .seconds(280), lag: 5_202)
        #expect(room.calibration.placement(of: bob)?.offset == .milliseconds(5_201))
        #expect(room.calibration.placement(of: bob)?.steps == 1)
    }

    @Test func whenTheReferenceStallsItIsTheOneThatSteps() throws {
        // alice is the reference (her sound came first). Her stream stalls for 2 s after 150 s:
        // against bob and against carol she is now 2 s later, while bob and carol still agree.
        var room = joined(alice, bob, carol)
        for ms in stride(from: 100_000 as Int64, through: 140_000, by: 20_000) {
            let at = WallTime.milliseconds(sinceEpoch: ms)
            room.heard(alice, bob, at: at, lag: 3_200)
            room.heard(alice, carol, at: at, lag: 7_500)
            room.heard(bob, carol, at: at + .milliseconds(3_200), lag: 4_300)
        }
        #expect(room.calibration.placement(of: alice)?.reference == alice)
        for ms in stride(from: 160_000 as Int64, through: 200_000, by: 20_000) {
            let at = WallTime.milliseconds(sinceEpoch: ms)
            room.heard(alice, bob, at: at, lag: 1_200)
            room.heard(alice, carol, at: at, lag: 5_500)
            room.heard(bob, carol, at: at + .milliseconds(1_200), lag: 4_300)
        }
        let calibration = room.calibration
        let stalled = try #require(calibration.placement(of: alice))
        #expect(stalled.steps == 1 && stalled.offset == .seconds(2), "alice fell 2 s further behind")
        #expect(calibration.placement(of: bob)?.steps == 0)
        #expect(calibration.placement(of: carol)?.steps == 0)
        #expect(calibration.lag(of: bob, behind: alice) == .milliseconds(1_200))
        #expect(calibration.lag(of: carol, behind: bob) == .milliseconds(4_300))
        // A message alice wrote before the stall keeps its moment.
        #expect(stalled.offset(at: .epoch + .seconds(120)) == .zero)
    }

    @Test func aCatchUpOfHalfASecondIsAStepBetweenMatchesButNotBetweenTaps() throws {
        var room = listening()
        room.heard(alice, bob, at: .epoch + .seconds(250), lag: 2_600)
        #expect(room.calibration.placement(of: bob)?.offset == .milliseconds(2_600))
        #expect(room.calibration.placement(of: bob)?.steps == 1)

        var taps = joined(alice, bob)
        for k in 0..<4 {
            taps.mark(alice, "moment \(k)", at: .milliseconds(sinceEpoch: 100_000 + Int64(k) * 30_000))
            taps.mark(bob, "moment \(k)", at: .milliseconds(sinceEpoch: 103_200 + Int64(k) * 30_000 - (k >= 2 ? 600 : 0)))
        }
        #expect(taps.calibration.placement(of: bob)?.steps == 0, "600 ms is within a thumb's noise")
    }

    @Test func smallWanderingOfMatchesIsAveragedNotStepped() throws {
        var room = joined(alice, bob)
        let lags: [Double] = [3_200, 3_204, 3_197, 3_201, 3_199, 3_203]
        for (k, lag) in lags.enumerated() { room.heard(alice, bob, at: .milliseconds(sinceEpoch: 100_000 + Int64(k) * 30_000), lag: lag) }
        let placement = try #require(room.calibration.placement(of: bob))
        #expect(placement.steps == 0)
        #expect(placement.offset == .milliseconds(3_201))  // the mean, 3 200.67
        #expect(placement.sound?.matches == 6)
    }

    // MARK: Every node, every order

    @Test(arguments: 1...8 as ClosedRange<UInt64>)
    func everyArrivalOrderGivesTheSameOffsets(seed: UInt64) {
        var room = joined(alice, bob, carol, dave)
        var rng = SplitMix64(seed: seed)
        for k in 0..<6 {
            let at = WallTime.milliseconds(sinceEpoch: 100_000 + Int64(k) * 30_000)
            room.heard(alice, bob, at: at, lag: 3_200 + Double(rng.next() % 20))
            room.heard(bob, carol, at: at + .milliseconds(3_200), lag: 4_300 + Double(rng.next() % 20))
            if k == 4 { room.heard(alice, carol, at: at, lag: 9_500) }  // carol rebuffered
        }
        room.mark(alice, "kickoff", at: .epoch + .seconds(90))
        room.mark(dave, "kickoff", at: .milliseconds(sinceEpoch: 91_000 + Int64(rng.next() % 400)))
        room.mark(carol, "kickoff", at: .milliseconds(sinceEpoch: 97_500 + Int64(rng.next() % 400)))
        room.mark(bob, "half time", at: .epoch + .seconds(300))
        room.mark(dave, "half time", at: .epoch + .milliseconds(297_800))
        let expected = room.calibration
        var shuffler = SplitMix64(seed: seed &* 7919)
        for _ in 0..<5 {
            let shuffled = room.events.shuffled(using: &shuffler) + room.events.prefix(3)
            #expect(CalibrationSolver.solve(shuffled) == expected)
        }
        #expect(expected.isCalibrated(dave) && expected.isCalibrated(carol))
    }
}
