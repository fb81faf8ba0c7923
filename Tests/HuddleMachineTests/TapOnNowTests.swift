import Testing

@testable import HuddleCore

/// The page's Now button, decided by the machine: a tap names no label and marks the moment on
/// offer as it arrives; the console's Enter marks what the console offered when the key arrived
/// (nothing, if it offered nothing). A tap is put back by the link's delay, given with it.
@Suite(.offThePool) struct TapOnNowTests {
    let room = "superbowl"

    /// alice and bob introduced, and bob's kickoff on offer at alice.
    func kickoffOnOffer() -> (lan: MachineLAN, alice: Int) {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        let bob = lan.add("bob")
        lan.introduceAll()
        lan.on(bob) { $0.handle(.consoleLine("/now kickoff", at: $1.wall), now: $1) }
        lan.deliverAll()
        lan.advance(.seconds(2))
        return (lan, alice)
    }

    func ownMarks(_ lan: MachineLAN, _ node: Int) -> [(label: String, at: WallTime)] {
        let me = lan[node].machine.identity.id
        return (lan[node].store.events[room] ?? [:]).values
            .filter { $0.origin == me }
            .sorted { $0.seq < $1.seq }
            .compactMap { event in
                if case .mark(let label) = event.body { (label, event.createdAt) } else { nil }
            }
    }

    @Test func aTapOnThePagesNowMarksTheMomentOnOfferPutBackByTheLinksDelay() {
        var (lan, alice) = kickoffOnOffer()
        #expect(lan[alice].machine.consoleView(now: lan.now).offer?.label.normalized == "kickoff")
        let arrived = lan.now.wall
        lan.on(alice) { $0.handle(.markOffered(nil, at: $1.wall, from: .page, linkDelay: .milliseconds(40)), now: $1) }
        let marks = ownMarks(lan, alice)
        #expect(marks.map(\.label) == ["kickoff"])
        #expect(marks.first?.at == arrived - .milliseconds(40))
        #expect(!lan[alice].problems.contains(.noMomentWaiting))
    }

    @Test func theConsolesEnterMarksOnlyWhatTheConsoleOffered() {
        var (lan, alice) = kickoffOnOffer()
        // The console offered nothing when the key arrived (its view was older): nothing is marked.
        lan.on(alice) { $0.handle(.markOffered(nil, at: $1.wall), now: $1) }
        #expect(ownMarks(lan, alice).isEmpty)
        #expect(lan[alice].problems.last == .noMomentWaiting)
        // What it offered is marked, at the key's time (a console has no link to put it back by).
        let pressed = lan.now.wall
        lan.on(alice) { $0.handle(.markOffered("kickoff", at: $1.wall), now: $1) }
        #expect(ownMarks(lan, alice).map(\.label) == ["kickoff"])
        #expect(ownMarks(lan, alice).first?.at == pressed)
    }

    @Test func aTapWithNothingOnOfferMarksNothingAndSaysSo() {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        lan.on(alice) { $0.handle(.markOffered(nil, at: $1.wall, from: .page, linkDelay: .milliseconds(40)), now: $1) }
        #expect(ownMarks(lan, alice).isEmpty)
        #expect(lan[alice].problems.last == .noMomentWaiting)
    }
}
