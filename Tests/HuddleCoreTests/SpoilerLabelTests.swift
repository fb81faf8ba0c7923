import Testing

@testable import HuddleCore

/// A moment's name is content too (issue 43): "safety" reaches a reader at his own moment like a
/// line, an unplaced reader sees only names anyone can say ahead (kickoff, the anthem...) or a cue
/// that names nothing, and nothing else tells him early.
@Suite(.offThePool) struct SpoilerLabelTests {
    let alice = NodeIdentity.generate()
    let dave = NodeIdentity.generate()
    let base = WallTime.milliseconds(sinceEpoch: 1_700_000_000_000)

    func proposals(_ outputs: [RoomOutput]) -> [String] {
        outputs.compactMap { output in
            switch output {
            case .calibrationEvent(let label, _): "proposes \(label)"
            case .mark(let label, _, _): "marked \(label)"
            case .unmarked(let label, _): "unmarked \(label)"
            case .markSetAside(_, let label): "set aside \(label)"
            case .momentCue(let by): "cue from \(by.nick)"
            default: nil
            }
        }
    }

    @Test func spoilerFreeMomentsAreThoseAnyScheduleNames() {
        for label in ["kickoff", "Kick-off", "the anthem", "2nd half", "start of the second half", "Q3", "halftime",
            "end of break", "back from commercials", "first pitch", "7th inning", "puck drop", "10:00", "q3 12:00",
            "2nd half 45:00"]
        {
            #expect(SpoilerFreeMoment.contains(CalibrationLabel(label)!), "\(label)")
        }
        for label in ["safety", "a goal", "touchdown", "interception", "overtime", "first down", "red card", "q9",
            "2nd goal", "kickoff return td", "touchdown 10:00", "7:61", "safety q3"]
        {
            #expect(!SpoilerFreeMoment.contains(CalibrationLabel(label)!), "\(label)")
        }
        #expect(SpoilerFreeMoment.suggested.allSatisfy { SpoilerFreeMoment.contains(CalibrationLabel($0)!) })
    }

    @Test func anUnplacedReaderIsCuedWithoutTheNameAndGetsItWhenTheShieldLetsItGo() throws {
        let dave = try ReaderHearsPeer(reader: self.dave, "dave", peer: alice, "alice", at: base)
        // alice proposes "safety" and marks it: dave, placed with nobody, reads no name.
        var outputs = dave.peerSays(.calibrationEvent(label: "safety"), at: base + .seconds(10))
        outputs += dave.peerSays(.mark(label: "safety"), at: base + .seconds(10))
        #expect(proposals(outputs) == ["cue from alice"])
        #expect(dave.room.markOffer(now: base + .seconds(11)) == nil)
        #expect(dave.room.labels.isEmpty)
        // A second moment of hers is not cued again.
        outputs = dave.peerSays(.calibrationEvent(label: "touchdown"), at: base + .seconds(40))
        #expect(proposals(outputs).isEmpty)
        // 90 s after she wrote it, the shield lets the name go, and it is offered from then on.
        #expect(proposals(dave.room.wake(now: base + .milliseconds(99_999))).isEmpty)
        outputs = dave.room.wake(now: base + .seconds(100))
        #expect(proposals(outputs) == ["proposes safety", "marked safety"])
        #expect(dave.room.markOffer(now: base + .seconds(101))?.label.normalized == "safety")
        #expect(dave.room.markOffer(now: base + .seconds(100) + PendingMarks.offerWindow + .seconds(1))?.label.normalized
            != "safety")
    }

    @Test func aSpoilerFreeNameReachesAnUnplacedReaderAtOnce() throws {
        let dave = try ReaderHearsPeer(reader: self.dave, "dave", peer: alice, "alice", at: base)
        let outputs = dave.peerSays(.calibrationEvent(label: "Kickoff"), at: base + .seconds(1))
            + dave.peerSays(.mark(label: "kickoff"), at: base + .seconds(1))
        #expect(proposals(outputs) == ["proposes kickoff", "marked kickoff"])
        #expect(dave.room.markOffer(now: base + .seconds(2))?.label.normalized == "kickoff")
    }

    @Test func aPlacedReaderGetsAProposalAtHisOwnMoment() throws {
        // dave is 2 min 18 s behind alice (both marked kickoff); alice marks "safety" later.
        let dave = try ReaderHearsPeer(reader: self.dave, "dave", peer: alice, "alice", at: base)
        dave.peerSays(.mark(label: "kickoff"), at: base + .seconds(1))
        _ = try dave.room.compose(.mark(label: "kickoff"), now: base + .seconds(139), signer: self.dave)
        #expect(dave.room.calibration.lag(of: self.dave.id, behind: alice.id) == .seconds(138))
        let outputs = dave.peerSays(.mark(label: "safety"), at: base + .seconds(200), arriving: base + .milliseconds(200_100))
        #expect(proposals(outputs).isEmpty, "no name, and no cue: he is placed")
        #expect(dave.room.markOffer(now: base + .seconds(300)) == nil)
        #expect(dave.room.nextWake == base + .seconds(338))
        #expect(proposals(dave.room.wake(now: base + .milliseconds(337_999))).isEmpty)
        #expect(proposals(dave.room.wake(now: base + .seconds(338))) == ["marked safety"])
        #expect(dave.room.markOffer(now: base + .seconds(339))?.label.normalized == "safety")
    }

    @Test func anotherReadersSetAsideMarkOrTakenBackMarkIsNotNamedEarly() throws {
        let dave = try ReaderHearsPeer(reader: self.dave, "dave", peer: alice, "alice", at: base)
        // A take-back of a name dave was never told says nothing.
        var outputs = dave.peerSays(.mark(label: "safety"), at: base + .seconds(5))
        outputs += dave.peerSays(.unmark(label: "safety"), at: base + .seconds(6))
        #expect(proposals(outputs) == ["cue from alice"])
        // Once told, it is said.
        _ = dave.room.wake(now: base + .seconds(95))
        outputs = dave.peerSays(.unmark(label: "safety"), at: base + .seconds(96))
        #expect(proposals(outputs) == ["unmarked safety"])
    }

    @Test func aRestartNeitherRepeatsANameNorShowsOneEarly() throws {
        let dave = try ReaderHearsPeer(reader: self.dave, "dave", peer: alice, "alice", at: base)
        dave.peerSays(.mark(label: "safety"), at: base + .seconds(5))
        dave.peerSays(.mark(label: "touchdown"), at: base + .seconds(80))
        _ = dave.room.wake(now: base + .seconds(96))  // "safety" told; "touchdown" not yet
        var restarted = RoomSession(room: "superbowl", reader: self.dave.id)
        let outputs = restarted.restore(dave.room.log.delivered, shown: [], now: base + .seconds(100))
        #expect(proposals(outputs).isEmpty)
        #expect(restarted.labels == [CalibrationLabel("safety")!])
        #expect(proposals(restarted.wake(now: base + .seconds(170))) == ["marked touchdown"])
    }

    @Test func theReadersOwnMarkOfANameNobodyToldHimProposesNothingTwice() throws {
        let dave = try ReaderHearsPeer(reader: self.dave, "dave", peer: alice, "alice", at: base)
        dave.peerSays(.calibrationEvent(label: "safety"), at: base + .seconds(5))
        #expect(dave.room.isProposed(CalibrationLabel("safety")!))
        #expect(!dave.room.labels.contains(CalibrationLabel("safety")!))
    }
}
