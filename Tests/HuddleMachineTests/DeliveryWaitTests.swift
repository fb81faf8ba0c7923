import Testing

@testable import HuddleCore

/// A node whose input ended waits until a peer holds what it wrote, asks meanwhile, and gives up
/// at the deadline or at once when no peer can turn up.
@Suite(.offThePool) struct DeliveryWaitTests {
    let bob = ReplicationTests.peer(2)
    let carol = ReplicationTests.peer(3)

    @Test func itAsksLivePeersThenStopsOnceOneHoldsTheLastEventOfEveryRoom() {
        var wait = DeliveryWait(written: ["superbowl": 3, "nfl": 1], now: .epoch)
        let live = ["superbowl": [bob, carol], "nfl": [bob]]
        #expect(wait.poll(now: .epoch, livePeers: live, peersPossible: true) == .ask([
            .init(room: "nfl", peer: bob, seq: 1), .init(room: "superbowl", peer: bob, seq: 3),
            .init(room: "superbowl", peer: carol, seq: 3),
        ]))
        #expect(wait.poll(now: .epoch + .milliseconds(100), livePeers: live, peersPossible: true) == .wait, "asked again only after 500 ms")
        wait.heard(room: "superbowl", seq: 2, from: "n3")  // an older event: not enough
        wait.heard(room: "nfl", seq: 1, from: "n2")
        #expect(wait.missing == ["superbowl"])
        #expect(wait.poll(now: .epoch + .milliseconds(500), livePeers: live, peersPossible: true) == .ask([
            .init(room: "superbowl", peer: bob, seq: 3), .init(room: "superbowl", peer: carol, seq: 3),
        ]))
        wait.heard(room: "superbowl", seq: 4, from: "n3")
        #expect(wait.poll(now: .epoch + .milliseconds(600), livePeers: live, peersPossible: true) == .delivered(to: ["n2", "n3"]))
    }

    @Test func itGivesUpAtTheDeadline() {
        var wait = DeliveryWait(written: ["superbowl": 3], now: .epoch + .seconds(1))
        #expect(wait.poll(now: .epoch + .seconds(1), livePeers: [:], peersPossible: true) == .wait, "no live peer yet: nobody to ask")
        #expect(wait.poll(now: .epoch + .milliseconds(5_999), livePeers: [:], peersPossible: true) == .wait)
        #expect(wait.poll(now: .epoch + .seconds(6), livePeers: [:], peersPossible: true) == .giveUp(.timedOut))
    }

    @Test func withNoPeerToBeFoundItDoesNotWaitAtAll() {
        var wait = DeliveryWait(written: ["superbowl": 3], now: .epoch)
        #expect(wait.poll(now: .epoch, livePeers: [:], peersPossible: false) == .giveUp(.noPeers))
    }

    /// A peer asked that is gone by the next ask: nobody to ask, so the next poll by the clock
    /// is the deadline, not a time already past (a timer woken by it would spin until then).
    @Test func withNobodyLeftToAskTheNextPollIsTheDeadline() {
        var wait = DeliveryWait(written: ["superbowl": 3], now: .epoch)
        #expect(wait.poll(now: .epoch, livePeers: ["superbowl": [bob]], peersPossible: true) == .ask([
            .init(room: "superbowl", peer: bob, seq: 3)
        ]))
        #expect(wait.nextPoll == .epoch + DeliveryWait.askInterval)
        #expect(wait.poll(now: .epoch + .milliseconds(600), livePeers: [:], peersPossible: true) == .wait)
        #expect(wait.nextPoll == wait.deadline)
        #expect(wait.poll(now: .epoch + .milliseconds(700), livePeers: ["superbowl": [carol]], peersPossible: true) == .ask([
            .init(room: "superbowl", peer: carol, seq: 3)
        ]), "a peer that turns up is asked as it comes")
        #expect(wait.nextPoll == .epoch + .milliseconds(700) + DeliveryWait.askInterval)
    }

    @Test func nothingWrittenIsDeliveredAtOnce() {
        var wait = DeliveryWait(written: ["superbowl": 0], now: .epoch)
        #expect(wait.poll(now: .epoch, livePeers: [:], peersPossible: false) == .delivered(to: []))
    }
}

/// The wait through the machine's door: piped input's end is an input, the wait's next ask and
/// its deadline are in ``NodeMachine/nextDeadline(now:)``, and how it ended is an effect. No
/// polling loop: the clock the test moves is the only one.
@Suite(.offThePool) struct DeliveryThroughTheDoorTests {
    /// The wait's reports, and the time to the machine's next deadline.
    static func dueIn(_ lan: MachineLAN, _ index: Int) -> TimeSpan {
        lan[index].machine.nextDeadline(now: lan.now) - lan.now.monotonic
    }

    @Test func aLineThatReachesAPeerEndsTheWaitAsDelivered() throws {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        lan.add("bob")
        lan.introduceAll()
        _ = try lan.on(alice) { machine, now in machine.say("piped hello", inRoomNamed: "superbowl", now: now) }.get()
        lan.on(alice) { machine, now in machine.handle(.inputEnded(peersFindable: true), now: now) }
        #expect(lan[alice].deliveries == [.waiting(DeliveryWait.timeout)])
        lan.deliverAll()  // the line reaches bob; alice's first ask was answered before it did
        #expect(lan[alice].deliveries == [.waiting(DeliveryWait.timeout)])
        // The next ask: bob sends alice's line back, byte for byte (before, a copy of her own
        // was screened out unnoted, and only bob's next digest ended the wait).
        lan.advance(DeliveryWait.askInterval)
        #expect(lan[alice].deliveries == [.waiting(DeliveryWait.timeout), .delivered(to: ["bob"])])
        #expect(lan[alice].machine.deliveryWait == nil)
    }

    @Test func withNothingWrittenSinceTheStartThereIsNothingToWaitFor() {
        var lan = MachineLAN()
        let alice = lan.add("alice")  // its join is from before the input: not waited for
        lan.on(alice) { machine, now in machine.handle(.inputEnded(peersFindable: true), now: now) }
        #expect(lan[alice].deliveries == [.nothingWritten])
    }

    @Test func aPeerThatNeverAnswersIsAskedEveryHalfSecondUntilTheDeadline() throws {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        let bob = lan.add("bob")
        lan.introduceAll()
        lan.blocked.insert([alice, bob])
        lan.answerPulls = false
        _ = try lan.on(alice) { machine, now in machine.say("into the void", inRoomNamed: "superbowl", now: now) }.get()
        let pullsBefore = lan[alice].pulls.count
        lan.on(alice) { machine, now in machine.handle(.inputEnded(peersFindable: true), now: now) }
        #expect(lan[alice].pulls.count == pullsBefore + 1, "bob, live, asked at once")
        #expect(Self.dueIn(lan, alice) <= DeliveryWait.askInterval, "the next ask is a deadline of the machine's")
        var waited = TimeSpan.zero
        while lan[alice].deliveries.count < 2, waited < .seconds(10) {
            let step = min(Self.dueIn(lan, alice), .seconds(1))
            lan.advance(max(step, .milliseconds(1)), deliver: false)
            waited = waited + max(step, .milliseconds(1))
        }
        #expect(lan[alice].deliveries == [.waiting(DeliveryWait.timeout), .notSent(.timedOut)])
        #expect(waited >= DeliveryWait.timeout && waited < DeliveryWait.timeout + .milliseconds(10), "\(waited)")
        let asks = lan[alice].pulls.count - pullsBefore
        #expect((9...11).contains(asks), "asked \(asks) times in 5 s")
    }

    @Test func withNoPeerKnownAndNoneFindableItEndsAtOnce() throws {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        _ = try lan.on(alice) { machine, now in machine.say("alone", inRoomNamed: "superbowl", now: now) }.get()
        lan.on(alice) { machine, now in machine.handle(.inputEnded(peersFindable: false), now: now) }
        #expect(lan[alice].deliveries == [.waiting(DeliveryWait.timeout), .notSent(.noPeers)])
    }

    /// mDNS said it cannot work here while the node waited, and no peer is known: the wait ends
    /// at once, saying so, rather than at its deadline.
    @Test func whenNoPeerCanBeFoundAnyMoreTheWaitEndsAtOnce() throws {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        _ = try lan.on(alice) { machine, now in machine.say("anyone?", inRoomNamed: "superbowl", now: now) }.get()
        lan.on(alice) { machine, now in machine.handle(.inputEnded(peersFindable: true), now: now) }
        #expect(lan[alice].deliveries == [.waiting(DeliveryWait.timeout)])
        lan.advance(.milliseconds(300))
        lan.on(alice) { machine, now in machine.handle(.inputEnded(peersFindable: false), now: now) }
        #expect(lan[alice].deliveries == [.waiting(DeliveryWait.timeout), .notSent(.noPeers)])
    }

    @Test func stoppingEndsTheWaitOnceAsNotSent() throws {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        _ = try lan.on(alice) { machine, now in machine.say("cut short", inRoomNamed: "superbowl", now: now) }.get()
        lan.on(alice) { machine, now in machine.handle(.inputEnded(peersFindable: true), now: now) }
        lan.on(alice) { machine, now in machine.handle(.stopping, now: now) }
        lan.on(alice) { machine, now in machine.handle(.stopping, now: now) }
        lan.advance(.seconds(6))
        #expect(lan[alice].deliveries == [.waiting(DeliveryWait.timeout), .notSent(.stopped)])
    }
}
