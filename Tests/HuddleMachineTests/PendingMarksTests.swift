import Testing

@testable import HuddleCore

/// Which proposed moment one key marks: the oldest still open, passed once a later one is marked.
@Suite(.offThePool) struct PendingMarksTests {
    let kickoff = CalibrationLabel("kickoff")!
    let firstDown = CalibrationLabel("first down")!
    let halftime = CalibrationLabel("halftime")!

    @Test func nothingProposedNothingOffered() {
        #expect(PendingMarks().offer(now: .epoch) == nil)
    }

    @Test func offersTheOldestOpenMomentAndCountsTheRest() {
        var pending = PendingMarks()
        pending.proposed(kickoff, at: .epoch + .seconds(1))
        pending.proposed(firstDown, at: .epoch + .seconds(20))
        #expect(pending.offer(now: .epoch + .seconds(30)) == .init(label: kickoff, more: 1))
        pending.readerMarked(kickoff, at: .epoch + .seconds(31))
        #expect(pending.offer(now: .epoch + .seconds(31)) == .init(label: firstDown, more: 0))
        pending.readerMarked(firstDown, at: .epoch + .seconds(40))
        #expect(pending.offer(now: .epoch + .seconds(40)) == nil)
    }

    @Test func aLaterMarkPassesEarlierProposals() {
        var pending = PendingMarks()
        pending.proposed(kickoff, at: .epoch)
        pending.proposed(firstDown, at: .epoch + .milliseconds(1))
        pending.proposed(halftime, at: .epoch + .milliseconds(2))
        // The viewer typed /now first down: kickoff is over on their screen.
        pending.readerMarked(firstDown, at: .epoch + .milliseconds(3))
        #expect(pending.pending(now: .epoch + .milliseconds(4)) == [halftime])
    }

    @Test func reproposingKeepsTheFirstPlace() {
        var pending = PendingMarks()
        pending.proposed(kickoff, at: .epoch)
        pending.proposed(firstDown, at: .epoch + .milliseconds(1))
        pending.proposed(kickoff, at: .epoch + .milliseconds(2))
        #expect(pending.pending(now: .epoch + .milliseconds(3)) == [kickoff, firstDown])
    }

    @Test func ignoredMomentsAreNotOffered() {
        var pending = PendingMarks()
        pending.proposed(kickoff, at: .epoch)
        pending.proposed(firstDown, at: .epoch + .milliseconds(1))
        pending.ignore(kickoff)
        #expect(pending.offer(now: .epoch + .milliseconds(2)) == .init(label: firstDown, more: 0))
        pending.ignore(kickoff, false)
        #expect(pending.offer(now: .epoch + .milliseconds(2))?.label == kickoff)
    }

    @Test func aJoinPassesEverythingProposedBefore() {
        var pending = PendingMarks()
        pending.proposed(kickoff, at: .epoch)
        pending.readerMarked(kickoff, at: .epoch + .milliseconds(1))
        pending.readerJoined()
        #expect(pending.offer(now: .epoch + .milliseconds(2)) == nil)
        pending.proposed(halftime, at: .epoch + .milliseconds(3))
        #expect(pending.offer(now: .epoch + .milliseconds(4))?.label == halftime)
    }

    @Test func offersExpireAfterTheWindow() {
        var pending = PendingMarks()
        pending.proposed(kickoff, at: .epoch)
        pending.proposed(halftime, at: .epoch + .seconds(60))
        #expect(pending.offer(now: .epoch + PendingMarks.offerWindow)?.label == kickoff)
        #expect(pending.nextExpiry(now: .epoch) == .epoch + PendingMarks.offerWindow + .milliseconds(1))
        #expect(pending.offer(now: .epoch + PendingMarks.offerWindow + .milliseconds(1)) == .init(label: halftime, more: 0))
        #expect(pending.offer(now: .epoch + PendingMarks.offerWindow + .milliseconds(60_001)) == nil)
    }

    @Test func completionListsOpenMomentsFirst() {
        var pending = PendingMarks()
        pending.proposed(halftime, at: .epoch)
        pending.proposed(kickoff, at: .epoch + .milliseconds(1))
        pending.proposed(firstDown, at: .epoch + .milliseconds(2))
        pending.readerMarked(kickoff, at: .epoch + .milliseconds(3))  // passes halftime too
        #expect(pending.labelsPendingFirst(now: .epoch + .milliseconds(4)) == [firstDown, halftime, kickoff])
    }

    @Test func aLateJoinerIsNotOfferedTheRoomsHistory() {
        var pending = PendingMarks()
        let joinedAt = WallTime.epoch + .seconds(30 * 60)
        // Made half an hour ago, pulled just now with the rest of the room's history.
        pending.proposed(kickoff, madeAt: .epoch, at: joinedAt)
        // Made a moment ago by a viewer ahead.
        pending.proposed(halftime, madeAt: joinedAt - .seconds(20), at: joinedAt)
        #expect(pending.offer(now: joinedAt) == .init(label: halftime, more: 0))
        // A proposer's clock running ahead does not keep an offer open longer.
        pending.proposed(firstDown, madeAt: joinedAt + .seconds(3_600), at: joinedAt)
        #expect(pending.pending(now: joinedAt + PendingMarks.offerWindow + .milliseconds(1)) == [])
    }
}

/// What Tab puts in place of the word before the cursor.
@Suite(.offThePool) struct ConsoleCompletionTests {
    let words = ConsoleCompletion.Words(
        rooms: ["superbowl", "super-league", "chess"], nicks: ["Bob", "bella", "carol"],
        labels: ["kickoff", "first down", "first pitch"])

    @Test func commandsComplete() {
        #expect(ConsoleCompletion.complete("/jo", words: words) == .init(replacing: 3, with: "/join ", candidates: []))
        #expect(ConsoleCompletion.complete("/h", words: words).candidates == ["/help", "/history"])
        #expect(ConsoleCompletion.complete("/x", words: words) == .none)
    }

    @Test func roomsAfterJoinGrowToTheSharedPrefixThenList() {
        let first = ConsoleCompletion.complete("/join s", words: words)
        #expect(first == .init(replacing: 1, with: "super", candidates: ["super-league", "superbowl"]))
        let second = ConsoleCompletion.complete("/join super", words: words)
        #expect(second == .init(replacing: 0, with: "", candidates: ["super-league", "superbowl"]))
        #expect(ConsoleCompletion.complete("/join c", words: words).with == "chess ")
    }

    @Test func labelsMayHoldSpaces() {
        #expect(ConsoleCompletion.complete("/now first p", words: words).with == "first pitch")
        #expect(ConsoleCompletion.complete("/ignore k", words: words).with == "kickoff")
        #expect(ConsoleCompletion.complete("/now first", words: words).candidates == ["first down", "first pitch"])
    }

    @Test func nicksIgnoreCaseAndKeepTheirOwn() {
        #expect(ConsoleCompletion.complete("bo", words: words) == .init(replacing: 2, with: "Bob: ", candidates: []))
        #expect(ConsoleCompletion.complete("nice one c", words: words) == .init(replacing: 1, with: "carol ", candidates: []))
        #expect(ConsoleCompletion.complete("b", words: words).candidates == ["Bob", "bella"])
        #expect(ConsoleCompletion.complete("hello ", words: words).candidates == ["Bob", "bella", "carol"])
    }

    @Test func commandsWithoutArgumentsCompleteNothingAfter() {
        #expect(ConsoleCompletion.complete("/who x", words: words) == .none)
    }

    @Test func emojiAreOneCharacterEach() {
        let emoji = ConsoleCompletion.Words(nicks: ["🏈fan", "🏈bot"])
        #expect(ConsoleCompletion.complete("🏈f", words: emoji) == .init(replacing: 2, with: "🏈fan: ", candidates: []))
        #expect(ConsoleCompletion.complete("🏈", words: emoji).candidates == ["🏈bot", "🏈fan"])
    }
}
