import Testing

@testable import HuddleCore

/// Which proposed moment one key marks: the oldest still open, passed once a later one is marked.
@Suite struct PendingMarksTests {
    let kickoff = CalibrationLabel("kickoff")!
    let firstDown = CalibrationLabel("first down")!
    let halftime = CalibrationLabel("halftime")!

    @Test func nothingProposedNothingOffered() {
        #expect(PendingMarks().offer(now: 0) == nil)
    }

    @Test func offersTheOldestOpenMomentAndCountsTheRest() {
        var pending = PendingMarks()
        pending.proposed(kickoff, at: 1_000)
        pending.proposed(firstDown, at: 20_000)
        #expect(pending.offer(now: 30_000) == .init(label: kickoff, more: 1))
        pending.readerMarked(kickoff, at: 31_000)
        #expect(pending.offer(now: 31_000) == .init(label: firstDown, more: 0))
        pending.readerMarked(firstDown, at: 40_000)
        #expect(pending.offer(now: 40_000) == nil)
    }

    @Test func aLaterMarkPassesEarlierProposals() {
        var pending = PendingMarks()
        pending.proposed(kickoff, at: 0)
        pending.proposed(firstDown, at: 1)
        pending.proposed(halftime, at: 2)
        // The viewer typed /now first down: kickoff is over on their screen.
        pending.readerMarked(firstDown, at: 3)
        #expect(pending.pending(now: 4) == [halftime])
    }

    @Test func reproposingKeepsTheFirstPlace() {
        var pending = PendingMarks()
        pending.proposed(kickoff, at: 0)
        pending.proposed(firstDown, at: 1)
        pending.proposed(kickoff, at: 2)
        #expect(pending.pending(now: 3) == [kickoff, firstDown])
    }

    @Test func ignoredMomentsAreNotOffered() {
        var pending = PendingMarks()
        pending.proposed(kickoff, at: 0)
        pending.proposed(firstDown, at: 1)
        pending.ignore(kickoff)
        #expect(pending.offer(now: 2) == .init(label: firstDown, more: 0))
        pending.ignore(kickoff, false)
        #expect(pending.offer(now: 2)?.label == kickoff)
    }

    @Test func aJoinPassesEverythingProposedBefore() {
        var pending = PendingMarks()
        pending.proposed(kickoff, at: 0)
        pending.readerMarked(kickoff, at: 1)
        pending.readerJoined()
        #expect(pending.offer(now: 2) == nil)
        pending.proposed(halftime, at: 3)
        #expect(pending.offer(now: 4)?.label == halftime)
    }

    @Test func offersExpireAfterTheWindow() {
        var pending = PendingMarks()
        pending.proposed(kickoff, at: 0)
        pending.proposed(halftime, at: 60_000)
        #expect(pending.offer(now: PendingMarks.offerWindow)?.label == kickoff)
        #expect(pending.nextExpiry(now: 0) == PendingMarks.offerWindow + 1)
        #expect(pending.offer(now: PendingMarks.offerWindow + 1) == .init(label: halftime, more: 0))
        #expect(pending.offer(now: PendingMarks.offerWindow + 60_001) == nil)
    }

    @Test func completionListsOpenMomentsFirst() {
        var pending = PendingMarks()
        pending.proposed(halftime, at: 0)
        pending.proposed(kickoff, at: 1)
        pending.proposed(firstDown, at: 2)
        pending.readerMarked(kickoff, at: 3)  // passes halftime too
        #expect(pending.labelsPendingFirst(now: 4) == [firstDown, halftime, kickoff])
    }

    @Test func aLateJoinerIsNotOfferedTheRoomsHistory() {
        var pending = PendingMarks()
        let joinedAt: Int64 = 30 * 60_000
        // Made half an hour ago, pulled just now with the rest of the room's history.
        pending.proposed(kickoff, madeAt: 0, at: joinedAt)
        // Made a moment ago by a viewer ahead.
        pending.proposed(halftime, madeAt: joinedAt - 20_000, at: joinedAt)
        #expect(pending.offer(now: joinedAt) == .init(label: halftime, more: 0))
        // A proposer's clock running ahead does not keep an offer open longer.
        pending.proposed(firstDown, madeAt: joinedAt + 3_600_000, at: joinedAt)
        #expect(pending.pending(now: joinedAt + PendingMarks.offerWindow + 1) == [])
    }
}

/// What Tab puts in place of the word before the cursor.
@Suite struct ConsoleCompletionTests {
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
