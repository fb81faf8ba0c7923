import Testing

@testable import HuddleCore

@Suite(.offThePool) struct HoldBackScheduleTests {
    let n1 = NodeID.fixture(1)
    let n2 = NodeID.fixture(2)
    let n3 = NodeID.fixture(3)
    let n9 = NodeID.fixture(9)

    /// Node 1 is the reference, node 2 is 2 s behind it, node 3 is 2 s ahead (the design's example).
    var example: Calibration {
        Calibration(placements: [
            n1: .init(reference: n1, offset: .zero),
            n2: .init(reference: n1, offset: .seconds(2)),
            n3: .init(reference: n1, offset: .seconds(-2)),
        ])
    }

    func chat(_ node: NodeID, _ seq: UInt64, at time: WallTime, _ text: String = "hi") -> Event {
        .fixture(node, seq, .chat(text: text), at: time)
    }

    func with(_ offsets: [NodeID: TimeSpan], reference: NodeID? = nil) -> Calibration {
        let reference = reference ?? offsets.keys.min()!
        return Calibration(placements: offsets.mapValues { .init(reference: reference, offset: $0) })
    }

    // MARK: The worked example

    @Test func workedExampleFromMarksToReleases() {
        var room = CalibrationRoomScript()
        room.mark(n1, "A", at: .epoch + .seconds(2))
        room.mark(n2, "A", at: .epoch + .seconds(4))
        room.mark(n3, "B", at: .epoch + .seconds(6))
        room.mark(n2, "B", at: .epoch + .seconds(10))
        let calibration = room.calibration
        #expect(calibration == example)

        // Node 3 writes at 20 000 on its clock; node 1 writes at 20 000 on its.
        let fromNode3 = chat(n3, 10, at: .epoch + .seconds(20))
        let fromNode1 = chat(n1, 10, at: .epoch + .seconds(20))

        var onNode1 = HoldBackSchedule(reader: n1, calibration: calibration)
        #expect(onNode1.releaseTime(of: fromNode3, now: .epoch + .seconds(20)) == .epoch + .seconds(22))  // 2 s after it was written
        #expect(onNode1.admit(fromNode3, now: .epoch + .seconds(20)).isEmpty)
        #expect(onNode1.nextWake == .epoch + .seconds(22))

        var onNode2 = HoldBackSchedule(reader: n2, calibration: calibration)
        #expect(onNode2.releaseTime(of: fromNode3, now: .epoch + .seconds(20)) == .epoch + .seconds(24))  // 4 s after
        #expect(onNode2.admit(fromNode3, now: .epoch + .seconds(20)).isEmpty)
        #expect(onNode2.nextWake == .epoch + .seconds(24))

        var onNode3 = HoldBackSchedule(reader: n3, calibration: calibration)
        #expect(onNode3.releaseTime(of: fromNode1, now: .epoch + .seconds(20)) == .epoch + .seconds(18))  // already past: at once
        let shown = onNode3.admit(fromNode1, now: .epoch + .seconds(20))
        #expect(shown.map(\.event) == [fromNode1])
        #expect(shown.first?.held == .zero)
        #expect(onNode3.pendingCount == 0)
    }

    // MARK: Due and next wake

    @Test func messageIsHeldUntilDue() {
        var schedule = HoldBackSchedule(reader: n2, calibration: example)
        let message = chat(n1, 1, at: .epoch + .seconds(10))
        #expect(schedule.nextWake == nil)
        #expect(schedule.admit(message, now: .epoch + .milliseconds(10_100)).isEmpty)
        #expect(schedule.pendingCount == 1)
        #expect(schedule.pending == [.init(event: message, arrivedAt: WallTime.epoch + .milliseconds(10_100), releaseAt: WallTime.epoch + .seconds(12))])
        #expect(schedule.nextWake == .epoch + .seconds(12))
        #expect(schedule.releaseDue(now: .epoch + .milliseconds(11_999)).isEmpty)
        #expect(schedule.releaseDue(now: .epoch + .seconds(12)) == [
            .init(event: message, arrivedAt: WallTime.epoch + .milliseconds(10_100),
                releaseAt: WallTime.epoch + .seconds(12), shownAt: WallTime.epoch + .seconds(12))
        ])
        #expect(schedule.releaseDue(now: .epoch + .seconds(12)).isEmpty)
        #expect(schedule.nextWake == nil)
        #expect(schedule.pendingCount == 0)
    }

    @Test func lateWakeUpReportsTheActualHold() {
        var schedule = HoldBackSchedule(reader: n2, calibration: example)
        _ = schedule.admit(chat(n1, 1, at: .epoch + .seconds(10)), now: .epoch + .milliseconds(10_100))
        let released = schedule.releaseDue(now: .epoch + .milliseconds(12_345))
        #expect(released.map(\.releaseAt) == [.epoch + .seconds(12)])
        #expect(released.map(\.shownAt) == [.epoch + .milliseconds(12_345)])
        #expect(released.map(\.held) == [.milliseconds(2_245)])
    }

    /// What a person reads is the lag, not transit or timer jitter: written at 10 s, due at 12 s
    /// (n2 is 2 s behind n1), arrived 100 ms late and shown 3 ms after due: held 1 903 ms, waited
    /// the 2 000 ms the status line says; a message held longer than its due (a late wake-up) says so.
    @Test func theWaitAPersonReadsIsTheLagUnlessTheNodeHeldItLonger() {
        var schedule = HoldBackSchedule(reader: n2, calibration: example)
        _ = schedule.admit(chat(n1, 1, at: .epoch + .seconds(10)), now: .epoch + .milliseconds(10_100))
        let onTime = schedule.releaseDue(now: .epoch + .milliseconds(12_003))
        #expect(onTime.map(\.held) == [.milliseconds(1_903)])
        #expect(onTime.map(\.waited) == [.seconds(2)])
        _ = schedule.admit(chat(n1, 2, at: .epoch + .seconds(20)), now: .epoch + .seconds(20))
        let late = schedule.releaseDue(now: .epoch + .seconds(25))
        #expect(late.map(\.waited) == [.seconds(5)])
    }

    @Test func ownMessagesAreShownAtOnce() {
        var schedule = HoldBackSchedule(reader: n2, calibration: example)
        let mine = chat(n2, 1, at: .epoch + .seconds(10))
        #expect(schedule.admit(mine, now: .epoch + .seconds(10)) == [
            .init(event: mine, arrivedAt: WallTime.epoch + .seconds(10),
                releaseAt: WallTime.epoch + .seconds(10), shownAt: WallTime.epoch + .seconds(10))
        ])
        var uncalibrated = HoldBackSchedule(reader: n9)
        #expect(uncalibrated.admit(chat(n9, 1, at: .epoch + .milliseconds(5)), now: .epoch + .milliseconds(5)).map(\.held) == [.zero])
    }

    @Test func messageWhoseMomentHasPassedIsShownAtOnce() {
        var schedule = HoldBackSchedule(reader: n2, calibration: example)
        let message = chat(n1, 1, at: .epoch + .seconds(10))
        let released = schedule.admit(message, now: .epoch + .seconds(13))
        #expect(released == [.init(event: message, arrivedAt: WallTime.epoch + .seconds(13),
            releaseAt: WallTime.epoch + .seconds(12), shownAt: WallTime.epoch + .seconds(13))])
        #expect(released.first?.held == .zero)
        #expect(schedule.pendingCount == 0)
    }

    @Test func withTheShieldOffMessagesBetweenUnconnectedNodesAreShownAtOnce() {
        let twoGroups = Calibration(placements: [
            n1: .init(reference: n1, offset: .zero), n2: .init(reference: n1, offset: .seconds(3)),
            n3: .init(reference: n3, offset: .zero), n9: .init(reference: n3, offset: .milliseconds(200)),
        ])
        var onNode2 = HoldBackSchedule(reader: n2, calibration: twoGroups, shield: nil)
        let fromOtherGroup = chat(n9, 1, at: .epoch + .seconds(10))
        #expect(onNode2.admit(fromOtherGroup, now: .epoch + .milliseconds(10_050)).map(\.releaseAt) == [.epoch + .milliseconds(10_050)])
        let fromOwnGroup = chat(n1, 1, at: .epoch + .seconds(10))
        #expect(onNode2.admit(fromOwnGroup, now: .epoch + .milliseconds(10_050)).isEmpty)
        #expect(onNode2.nextWake == .epoch + .seconds(13))

        var uncalibratedReader = HoldBackSchedule(reader: n9, calibration: example, shield: nil)
        #expect(uncalibratedReader.admit(chat(n2, 1, at: .epoch + .seconds(10)), now: .epoch + .milliseconds(10_010)).count == 1)
    }

    @Test func duplicateAdmissionWhilePendingIsIgnored() {
        var schedule = HoldBackSchedule(reader: n2, calibration: example)
        let message = chat(n1, 1, at: .epoch + .seconds(10))
        _ = schedule.admit(message, now: .epoch + .milliseconds(10_100))
        _ = schedule.admit(message, now: .epoch + .milliseconds(10_200))
        #expect(schedule.pendingCount == 1)
        #expect(schedule.releaseDue(now: .epoch + .seconds(20)).map(\.arrivedAt) == [.epoch + .milliseconds(10_100)])
    }

    @Test func admittingAlsoReleasesWhateverElseIsDue() {
        var schedule = HoldBackSchedule(reader: n2, calibration: example)
        let early = chat(n1, 1, at: .epoch + .seconds(10))  // due 12 000
        _ = schedule.admit(early, now: .epoch + .seconds(10))
        let mine = chat(n2, 1, at: .epoch + .milliseconds(12_500))
        #expect(schedule.admit(mine, now: .epoch + .milliseconds(12_500)).map(\.event) == [early, mine])
    }

    // MARK: Recalibration

    @Test func recalibrationMovesReleaseTimesLater() {
        var schedule = HoldBackSchedule(reader: n2, calibration: example)
        _ = schedule.admit(chat(n1, 1, at: .epoch + .seconds(10)), now: .epoch + .milliseconds(10_100))
        #expect(schedule.recalibrate(with([n1: .zero, n2: .seconds(5)]), now: .epoch + .seconds(11)).isEmpty)
        #expect(schedule.nextWake == .epoch + .seconds(15))
        #expect(schedule.releaseDue(now: .epoch + .seconds(12)).isEmpty)
        #expect(schedule.releaseDue(now: .epoch + .seconds(15)).map(\.held) == [.milliseconds(4_900)])
    }

    @Test func recalibrationMovesReleaseTimesEarlierAndReleasesWhatIsNowDue() {
        var schedule = HoldBackSchedule(reader: n2, calibration: example)
        let soon = chat(n1, 1, at: .epoch + .seconds(10))  // due 12 000, then 10 500
        let later = chat(n1, 2, at: .epoch + .seconds(20))  // due 22 000, then 20 500
        _ = schedule.admit(soon, now: .epoch + .milliseconds(10_100))
        _ = schedule.admit(later, now: .epoch + .milliseconds(10_100))
        let released = schedule.recalibrate(with([n1: .zero, n2: .milliseconds(500)]), now: .epoch + .seconds(11))
        #expect(released == [.init(event: soon, arrivedAt: WallTime.epoch + .milliseconds(10_100),
            releaseAt: WallTime.epoch + .milliseconds(10_500), shownAt: WallTime.epoch + .seconds(11))])
        #expect(schedule.nextWake == .epoch + .milliseconds(20_500))
        #expect(schedule.calibration == with([n1: .zero, n2: .milliseconds(500)]))
    }

    @Test func withTheShieldOffLosingCalibrationKeepsHeldMessagesHeldUntilTheirLastKnownTime() {
        // Node 3 is 2 s ahead of reader node 1 and 4 s ahead of node 2 (the worked example).
        var schedule = HoldBackSchedule(reader: n2, calibration: example, shield: nil)
        let a = chat(n1, 1, at: .epoch + .seconds(10))  // due at 12 000
        let b = chat(n3, 1, at: .epoch + .seconds(9))  // due at 13 000
        for message in [a, b] { _ = schedule.admit(message, now: .epoch + .milliseconds(10_100)) }
        #expect(schedule.pendingCount == 2)
        // Everyone leaves: no calibration at all. Nothing is shown early: that would spoil it.
        #expect(schedule.recalibrate(.none, now: .epoch + .milliseconds(10_200)).isEmpty)
        #expect(schedule.nextWake == .epoch + .seconds(12))
        #expect(schedule.releaseDue(now: .epoch + .seconds(12)).map(\.event) == [a])
        #expect(schedule.releaseDue(now: .epoch + .seconds(13)).map(\.event) == [b])
        // With the shield off, a message arriving while disconnected is shown at once.
        #expect(schedule.admit(chat(n3, 2, at: .epoch + .milliseconds(13_500)), now: .epoch + .milliseconds(13_600)).count == 1)
    }

    // MARK: The shield

    @Test func aMessageFromSomeoneTheReaderIsNotPlacedWithWaitsTheShieldFromWhenItWasWritten() {
        let twoGroups = Calibration(placements: [
            n1: .init(reference: n1, offset: .zero), n2: .init(reference: n1, offset: .seconds(3)),
            n3: .init(reference: n3, offset: .zero), n9: .init(reference: n3, offset: .milliseconds(200)),
        ])
        var onNode2 = HoldBackSchedule(reader: n2, calibration: twoGroups)
        #expect(onNode2.shield == .seconds(90))
        // From another group: 90 s after it was written (its writer's clock), not after it arrived.
        #expect(onNode2.admit(chat(n9, 1, at: .epoch + .seconds(10)), now: .epoch + .seconds(12)).isEmpty)
        #expect(onNode2.nextWake == .epoch + .seconds(100))
        // From its own group: the calibrated time, as ever.
        #expect(onNode2.admit(chat(n1, 1, at: .epoch + .seconds(10)), now: .epoch + .seconds(12)).isEmpty)
        #expect(onNode2.nextWake == .epoch + .seconds(13))
        #expect(onNode2.releaseDue(now: .epoch + .milliseconds(99_999)).map(\.event.origin) == [n1])
        #expect(onNode2.releaseDue(now: .epoch + .seconds(100)).map(\.event.origin) == [n9])
        // An unplaced reader waits for everyone, its own words excepted; something written more
        // than the shield ago is past on every stream and shows at once. (The worked example's
        // streams run 4 s apart at most, well within a shield of 60 s.)
        var unplaced = HoldBackSchedule(reader: n9, calibration: example, shield: .seconds(60))
        #expect(unplaced.shield == .seconds(60))
        // n2 is the slowest stream placed: 60 s after it wrote.
        #expect(unplaced.admit(chat(n2, 1, at: .epoch + .seconds(10)), now: .epoch + .milliseconds(10_010)).isEmpty)
        #expect(unplaced.nextWake == .epoch + .seconds(70))
        #expect(unplaced.admit(chat(n9, 1, at: .epoch + .seconds(11)), now: .epoch + .seconds(11)).count == 1)
        // n1 runs 2 s ahead of n2: its words wait 2 s more, until the slowest has shown them.
        #expect(unplaced.admit(chat(n1, 1, at: .epoch), now: .epoch + .seconds(61)).isEmpty)
        #expect(unplaced.releaseDue(now: .epoch + .seconds(62)).map(\.event.origin) == [n1])
        #expect(unplaced.nextWake == .epoch + .seconds(70))
    }

    @Test func theShieldLetsAPlacedGroupsLinesGoInGameOrder() {
        // alice (n3) runs 7 s ahead of carol (n2); dave (n9) is placed with neither. alice writes
        // INTERCEPTION at her 46 s (game 46 s); carol writes at her 48 s, which is game 41 s: the
        // play before it. Counting from when each was written would show alice's first; dave
        // reads them in the order the game showed them, carol's first.
        let group = Calibration(placements: [
            n3: .init(reference: n3, offset: .zero), n2: .init(reference: n3, offset: .seconds(7)),
        ])
        var dave = HoldBackSchedule(reader: n9, calibration: group)
        _ = dave.admit(chat(n3, 1, at: .epoch + .seconds(46)), now: .epoch + .seconds(46))
        _ = dave.admit(chat(n2, 1, at: .epoch + .seconds(48)), now: .epoch + .seconds(48))
        #expect(dave.pending.map(\.event.origin) == [n2, n3])
        // Neither before 90 s after the slowest stream (carol's) showed it.
        #expect(dave.releaseDue(now: .epoch + .milliseconds(137_999)).isEmpty)
        #expect(dave.releaseDue(now: .epoch + .seconds(138)).map(\.event.origin) == [n2])
        #expect(dave.releaseDue(now: .epoch + .milliseconds(142_999)).isEmpty)
        #expect(dave.releaseDue(now: .epoch + .seconds(143)).map(\.event.origin) == [n3])
    }

    @Test func theShieldGrowsToTheWidestSpreadTheRoomShowsAndNeverShrinksByItself() {
        var dave = HoldBackSchedule(reader: n9, calibration: .none)
        #expect(dave.shield == .seconds(90))
        _ = dave.admit(chat(n1, 1, at: .epoch + .seconds(10)), now: .epoch + .seconds(10))
        #expect(dave.nextWake == .epoch + .seconds(100))
        // bob (n2) turns out 2 min 5 s behind alice (n1): the shield covers that, and 30 s more.
        let apart = Calibration(placements: [
            n1: .init(reference: n1, offset: .zero), n2: .init(reference: n1, offset: .seconds(125)),
        ])
        #expect(dave.recalibrate(apart, now: .epoch + .seconds(20)).isEmpty)
        #expect(dave.shield == .seconds(155))
        #expect(dave.widestSpread == Calibration.Spread(ahead: n1, behind: n2, apart: .seconds(125)))
        // alice's word waits for bob's stream to show it, and 155 s more.
        #expect(dave.nextWake == .epoch + .seconds(10 + 125 + 155))
        // bob takes his mark back: the streams are still that far apart, the shield stays.
        _ = dave.recalibrate(.none, now: .epoch + .seconds(30))
        #expect(dave.shield == .seconds(155))
        // A spread the floor covers leaves the floor as it is.
        var carol = HoldBackSchedule(reader: n9, calibration: .none, shield: .seconds(60))
        _ = carol.recalibrate(Calibration(placements: [
            n1: .init(reference: n1, offset: .zero), n2: .init(reference: n1, offset: .seconds(40)),
        ]), now: .epoch)
        #expect(carol.shield == .seconds(60))
        // A floor set higher still wins; off is off.
        _ = dave.setShield(.seconds(200), now: .epoch + .seconds(31))
        #expect(dave.shield == .seconds(200))
        _ = dave.setShield(nil, now: .epoch + .seconds(32))
        #expect(dave.shield == nil)
        #expect(dave.pendingCount == 0)
    }

    @Test func aWritersClockAheadOfTheReadersHoldsItsMessageNoLongerThanTheShieldFromArrival() {
        var unplaced = HoldBackSchedule(reader: n9, calibration: .none, shield: .seconds(90))
        // Written "an hour from now" by a clock far ahead: 90 s from when it arrived.
        _ = unplaced.admit(chat(n1, 1, at: .epoch + .seconds(3_600)), now: .epoch + .seconds(10))
        #expect(unplaced.nextWake == .epoch + .seconds(100))
    }

    @Test func losingCalibrationPutsTheShieldUpAtOnce() {
        // Node 3 is 2 s ahead of reader node 1 and 4 s ahead of node 2 (the worked example).
        var schedule = HoldBackSchedule(reader: n2, calibration: example, shield: .seconds(90))
        let a = chat(n1, 1, at: .epoch + .seconds(10))  // due at 12 000
        for message in [a] { _ = schedule.admit(message, now: .epoch + .milliseconds(10_100)) }
        // The reader takes its mark back: no calibration. a now waits the shield, not 2 s.
        #expect(schedule.recalibrate(.none, now: .epoch + .milliseconds(10_200)).isEmpty)
        #expect(schedule.nextWake == .epoch + .seconds(100))
        // And so does what arrives now.
        #expect(schedule.admit(chat(n3, 2, at: .epoch + .seconds(13)), now: .epoch + .seconds(13)).isEmpty)
        #expect(schedule.releaseDue(now: .epoch + .seconds(100)).map(\.event) == [a])
        // Placed again: the exact rule takes over and what is past on the reader's stream goes.
        #expect(schedule.recalibrate(example, now: .epoch + .seconds(101)).map(\.event.origin) == [n3])
    }

    @Test func theShieldCanBeLoweredOrTurnedOffAndWaitingMessagesFollow() {
        var schedule = HoldBackSchedule(reader: n9, calibration: .none)
        _ = schedule.admit(chat(n1, 1, at: .epoch + .seconds(10)), now: .epoch + .seconds(10))
        _ = schedule.admit(chat(n2, 1, at: .epoch + .seconds(20)), now: .epoch + .seconds(20))
        #expect(schedule.setShield(.seconds(15), now: .epoch + .seconds(26)).map(\.event.origin) == [n1])
        #expect(schedule.nextWake == .epoch + .seconds(35))
        #expect(schedule.setShield(nil, now: .epoch + .seconds(27)).map(\.event.origin) == [n2])
        #expect(schedule.shield == nil)
    }

    // MARK: Ordering

    @Test func equalReleaseTimesComeOutByEventID() {
        var schedule = HoldBackSchedule(reader: n2, calibration: example)
        // Same game time (10 000) from node 3 (wrote at 8 000) and node 1 (wrote at 10 000): both due at 12 000.
        let fromNode3 = chat(n3, 4, at: .epoch + .seconds(8))
        let fromNode1 = chat(n1, 7, at: .epoch + .seconds(10))
        _ = schedule.admit(fromNode3, now: .epoch + .seconds(10))
        _ = schedule.admit(fromNode1, now: .epoch + .seconds(10))
        #expect(schedule.releaseDue(now: .epoch + .seconds(12)).map(\.event) == [fromNode1, fromNode3])
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func thousandsOfMessagesComeOutInReleaseOrder(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var schedule = HoldBackSchedule(reader: n2, calibration: example)
        var seqs: [NodeID: UInt64] = [:]
        var now = WallTime.epoch + .seconds(1_000)
        var batches: [[HoldBackSchedule.Release]] = []
        var admitted = 0
        for _ in 0..<5_000 {
            let sender = [n1, n3].randomElement(using: &rng)!
            let seq = seqs[sender, default: 0] + 1
            seqs[sender] = seq
            let message = chat(sender, seq, at: now - .milliseconds(Int64.random(in: 0...3_000, using: &rng)))
            now += .milliseconds(Int64.random(in: 0...5, using: &rng))
            batches.append(schedule.admit(message, now: now))
            admitted += 1
            if Int.random(in: 0..<20, using: &rng) == 0 { batches.append(schedule.releaseDue(now: now)) }
            #expect(schedule.nextWake.map { $0 > now } ?? true)
        }
        batches.append(schedule.releaseDue(now: .distantFuture))
        let released = batches.flatMap { $0 }
        #expect(released.count == admitted)
        #expect(Set(released.map(\.event.id)).count == admitted)
        #expect(released.allSatisfy { $0.shownAt >= $0.releaseAt && $0.shownAt >= $0.arrivedAt })
        #expect(batches.last!.count > 100, "plenty must still be waiting at the end")
        // Within each batch, releases follow (releaseAt, game time, id).
        let calibration = example
        for batch in batches {
            for (earlier, next) in zip(batch, batch.dropFirst()) {
                let lhs = (earlier.releaseAt, calibration.historyKey(of: earlier.event))
                let rhs = (next.releaseAt, calibration.historyKey(of: next.event))
                #expect(lhs < rhs || (lhs == rhs && earlier.event.id < next.event.id))
            }
        }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func recalibrationReordersManyPendingMessages(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var schedule = HoldBackSchedule(reader: n2, calibration: example)
        var seqs: [NodeID: UInt64] = [:]
        for _ in 0..<1_000 {
            let sender = [n1, n3].randomElement(using: &rng)!
            let seq = seqs[sender, default: 0] + 1
            seqs[sender] = seq
            _ = schedule.admit(
                chat(sender, seq, at: .epoch + .milliseconds(Int64.random(in: 10_000...60_000, using: &rng))), now: .epoch)
        }
        #expect(schedule.pendingCount == 1_000)
        // Node 3 turns out to be 4 s *behind* node 1 and the reader only 1 s: the order changes.
        let revised = with([n1: .zero, n2: .seconds(1), n3: .seconds(4)], reference: n1)
        #expect(schedule.recalibrate(revised, now: .epoch).isEmpty)
        let released = schedule.releaseDue(now: .distantFuture)
        #expect(released.count == 1_000)
        #expect(released.allSatisfy { $0.releaseAt == revised.historyKey(of: $0.event) + .seconds(1) })
        for (earlier, next) in zip(released, released.dropFirst()) {
            #expect(
                earlier.releaseAt < next.releaseAt
                    || (earlier.releaseAt == next.releaseAt && earlier.event.id < next.event.id))
        }
    }

    // MARK: History order

    @Test func historyIsOrderedByGameTime() {
        let calibration = example
        let fromNode3 = chat(n3, 1, at: .epoch + .seconds(7))  // game time 9 000
        let fromNode2 = chat(n2, 1, at: .epoch + .milliseconds(10_500))  // game time 8 500
        let fromNode1 = chat(n1, 1, at: .epoch + .seconds(9))  // game time 9 000, id before node 3's
        let uncalibrated = chat(n9, 1, at: .epoch + .milliseconds(8_700))  // keyed by its createdAt
        #expect(calibration.gameTime(of: fromNode2) == .epoch + .milliseconds(8_500))
        #expect(calibration.gameTime(of: uncalibrated) == nil)
        let order = calibration.historyOrder([fromNode3, uncalibrated, fromNode1, fromNode2])
        #expect(order == [fromNode2, uncalibrated, fromNode1, fromNode3])
        #expect(calibration.historyOrder(order.reversed()) == order)
    }
}
