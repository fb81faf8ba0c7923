import HuddleCore
import Testing

/// Listening through the machine (docs/AUDIO.md): what a listening node sends, what it takes
/// from whom, and when a match becomes a `heard` event that moves everyone's offsets.
@Suite(.offThePool) struct NodeMachineListeningTests {
    let room = "superbowl"

    /// Two seconds of made-up features starting at `start`, every frame loud.
    func frames(_ seed: UInt32) -> (bits: [UInt32], loud: [Bool]) {
        let bits = (0..<200).map { UInt32($0) &* 2_654_435_761 ^ seed }
        return (bits, Array(repeating: true, count: 200))
    }

    /// Alice and bob in the room (a private one with `key`), both listening.
    func listeningPair(key: RoomKey? = nil) -> (MachineLAN, Int, Int) {
        var lan = MachineLAN()
        let alice = lan.add("alice", room: key == nil ? room : nil)
        let bob = lan.add("bob", room: key == nil ? room : nil)
        if let key {
            lan.on(alice) { $0.join(key: key, now: $1) }
            lan.on(bob) { $0.join(key: key, now: $1) }
        }
        lan.introduceAll()
        lan.deliverAll()
        for host in [alice, bob] {
            lan.on(host) { $0.handle(.listeningStarted(source: "file", at: $1.wall), now: $1) }
        }
        return (lan, alice, bob)
    }

    @Test func ownSoundGoesToTheRoomsPeersSignedAndTheirMatcherGetsItOpened() throws {
        var (lan, alice, bob) = listeningPair()
        let sound = frames(7)
        let start = lan.now.wall - .seconds(2)
        lan.on(alice) { $0.handle(.heardOwnSound(start: start, bits: sound.bits, loud: sound.loud), now: $1) }
        #expect(lan[alice].machine.counters.soundWindowsOut == 1)
        lan.deliverAll()
        let heard = try #require(lan[bob].heard.first)
        #expect(heard.from == lan[alice].machine.identity.id)
        #expect(heard.start == start)
        #expect(heard.bits == sound.bits)
        #expect(lan[bob].machine.counters.soundWindowsIn == 1)
        // The listening line said where the sound comes from.
        #expect(lan[bob].outputs.contains(.listening(source: "file", startedAt: lan.now.wall)))
    }

    /// Friends in two homes whose routers let alice and carol never meet: bob, who reaches both,
    /// relays their sound as he relays their chat, so they calibrate by ear all the same. What
    /// bob passes on is alice's signed window, untouched; carol checks it as if it came straight.
    @Test func soundGoesThroughARelayToAPeerThatCannotBeReachedDirectly() throws {
        var (lan, alice, bob, carol) = MachineLAN.cutPair()
        for _ in 0..<150 { lan.advance(.milliseconds(100)) }  // as in NodeMachineTests: the relay path is found
        let carolID = lan[carol].machine.identity.id
        #expect(lan[alice].machine.membership.route(to: carolID).relay == lan[bob].machine.identity.id)
        for host in [alice, bob, carol] {
            lan.on(host) { $0.handle(.listeningStarted(source: "file", at: $1.wall), now: $1) }
        }
        let sound = frames(11)
        lan.on(alice) { $0.handle(.heardOwnSound(start: $1.wall - .seconds(2), bits: sound.bits, loud: sound.loud), now: $1) }
        lan.deliverAll()
        let heard = try #require(lan[carol].heard.first)
        #expect(heard.from == lan[alice].machine.identity.id)
        #expect(heard.bits == sound.bits)
        #expect(lan[bob].heard.map(\.from) == [lan[alice].machine.identity.id])  // bob's own copy, direct
        #expect(lan[carol].machine.counters.soundWindowsIn == 1)
    }

    @Test(arguments: [false, true])
    func inEveryRoomTheFeaturesAreSealedForTheirOneReceiver(isPrivate: Bool) throws {
        let key = RoomKey(name: room, master: Array(repeating: 7, count: 32))
        var (lan, alice, bob) = listeningPair(key: isPrivate ? key : nil)
        let sound = frames(9)
        lan.on(alice) { $0.handle(.heardOwnSound(start: $1.wall - .seconds(2), bits: sound.bits, loud: sound.loud), now: $1) }
        let sent = try #require(lan.relaysInFlight.first)
        let onTheWire = try #require(try? Datagram(decoding: sent.bytes))
        guard case .sound(let window) = onTheWire else { Issue.record("not a sound window"); return }
        #expect(!window.seal.isEmpty && window.bits.isEmpty, "no frame readable on the wire")
        #expect(window.room == (isPrivate ? key.id : room))
        #expect(key.open(window, for: lan[bob].machine.identity.id) == nil, "not even with the room's key")
        lan.deliverAll()
        #expect(try #require(lan[bob].heard.first).bits == sound.bits)
    }

    /// Bob is in the room and does not listen: alice's windows go to him only when she starts
    /// (3) and in her re-checks (2 every 120 s); in between, nothing leaves her machine.
    @Test func nothingLeavesWhileNoPeerNeedsIt() throws {
        var lan = MachineLAN()
        let alice = lan.add("alice", room: room)
        let bob = lan.add("bob", room: room)
        lan.introduceAll()
        lan.deliverAll()
        lan.on(alice) { $0.handle(.listeningStarted(source: "file", at: $1.wall), now: $1) }
        let sound = frames(5)
        var sent: [Int] = []
        for index in 0..<70 {
            let before = lan[alice].machine.counters.soundWindowsOut
            lan.on(alice) { $0.handle(.heardOwnSound(start: $1.wall - .seconds(2), bits: sound.bits, loud: sound.loud), now: $1) }
            if lan[alice].machine.counters.soundWindowsOut > before { sent.append(index) }
            for _ in 0..<20 { lan.advance(.milliseconds(100)) }
        }
        #expect(sent == [0, 1, 2, 3, 4, 63, 64], "the announcement, then a re-check every 120 s")
        #expect(lan[bob].heard.isEmpty, "bob does not listen: he reads none of it")
        let sharing = try #require(lan[alice].machine.listening?.sharing)
        #expect(sharing.sharedSeconds == 14 && sharing.heardSeconds == 140 && sharing.reason == .kept)
    }

    @Test func windowsAreTakenOnlyWhileListeningFromLivePeersOfTheRoomAndSigned() throws {
        var (lan, alice, bob) = listeningPair()
        let sound = frames(3)
        let aliceID = lan[alice].machine.identity
        let bobID = lan[bob].machine.identity
        let at = lan.now.wall
        func window(from identity: NodeIdentity, room: String = "superbowl") -> SoundWindow {
            let key = identity.directKey(with: bobID.id, peerAgreementKey: bobID.agreementPublicKey, name: "@bob")!
            return SoundWindow.made(
                by: identity, room: room, for: bobID.id, pairKey: key, sentAt: at, start: at - .seconds(2),
                bits: sound.bits, loud: sound.loud)
        }
        let source = lan[alice].address
        // A stranger's window, and one of a room bob is not in.
        let stranger = window(from: .generate())
        let elsewhere = window(from: aliceID, room: "worldseries")
        lan.on(bob) { $0.handle(.datagram(stranger.encoded(), from: source), now: $1) }
        lan.on(bob) { $0.handle(.datagram(elsewhere.encoded(), from: source), now: $1) }
        // Alice's, with a frame changed after she signed it.
        var forged = window(from: aliceID)
        forged.start += .seconds(1)
        lan.on(bob) { $0.handle(.datagram(forged.encoded(), from: source), now: $1) }
        #expect(lan[bob].machine.counters.drops[.unknownSender] == 1)
        #expect(lan[bob].machine.counters.drops[.notJoined] == 1)
        #expect(lan[bob].machine.counters.drops[.badSignature] == 1)
        #expect(lan[bob].heard.isEmpty)
        // Not listening: not read at all.
        lan.on(bob) { $0.handle(.listeningStopped(reason: nil), now: $1) }
        let honest = window(from: aliceID)
        lan.on(bob) { $0.handle(.datagram(honest.encoded(), from: source), now: $1) }
        #expect(lan[bob].machine.counters.drops[.notListening] == 1)
        #expect(lan[bob].heard.isEmpty)
        #expect(lan[bob].outputs.contains(.listeningStopped(reason: nil)))
    }

    /// Issue 45: a stranger without keys sent windows "from alice" to bob (random signatures),
    /// faster than alice's budget: they spent it before their signatures were checked, and bob
    /// never took alice's own. Now only a signed window spends its sender's budget, and a
    /// replayed one, or one sent 5 minutes from now, is refused before it does.
    @Test func forgedReplayedAndFarOffWindowsSpendNothingOfTheSendersBudget() throws {
        var (lan, alice, bob) = listeningPair()
        let aliceID = lan[alice].machine.identity
        let bobID = lan[bob].machine.identity
        let key = aliceID.directKey(with: bobID.id, peerAgreementKey: bobID.agreementPublicKey, name: "@bob")!
        let source = lan[alice].address
        func window(_ seed: UInt32, sentAt: WallTime) -> SoundWindow {
            let sound = frames(seed)
            return SoundWindow.made(
                by: aliceID, room: room, for: bobID.id, pairKey: key, sentAt: sentAt, start: sentAt - .seconds(2),
                bits: sound.bits, loud: sound.loud)
        }
        for second in 0..<20 {
            let now = lan.now.wall
            // Ten forged windows a second "from alice", then her own.
            for forgery in 0..<10 {
                var forged = window(UInt32(100 * second + forgery), sentAt: now)
                forged.signature = Array(repeating: UInt8(forgery), count: 64)
                lan.on(bob) { $0.handle(.datagram(forged.encoded(), from: source), now: $1) }
            }
            if second % 2 == 0 {
                let honest = window(UInt32(second), sentAt: now)
                lan.on(bob) { $0.handle(.datagram(honest.encoded(), from: source), now: $1) }
                // Replayed at once, and again a second later.
                lan.on(bob) { $0.handle(.datagram(honest.encoded(), from: source), now: $1) }
            }
            lan.advance(.seconds(1))
        }
        #expect(lan[bob].heard.count == 10, "every one of alice's own windows")
        #expect(lan[bob].machine.counters.drops[.soundReplayed] == 10)
        #expect((lan[bob].machine.counters.drops[.badSignature] ?? 0) + (lan[bob].machine.counters.drops[.checkBudget] ?? 0) == 200)
        #expect(lan[bob].machine.counters.drops[.soundBudget] == nil)
        // A window signed to have been sent in 1970, or in 2100.
        for sentAt in [WallTime.epoch + .seconds(1), lan.now.wall + .seconds(3_600 * 24 * 365 * 75)] {
            lan.on(bob) { $0.handle(.datagram(window(7, sentAt: sentAt).encoded(), from: source), now: $1) }
        }
        #expect(lan[bob].machine.counters.drops[.soundReplayed] == 12)
        #expect(lan[bob].heard.count == 10)
    }

    @Test func anAlignedMatchBecomesAHeardEventThatPlacesBothViewersEverywhere() throws {
        var (lan, alice, bob) = listeningPair()
        let carol = lan.add("carol")
        lan.introduceAll()
        lan.deliverAll()
        let bobID = lan[bob].machine.identity.id
        // Alice's matcher found bob 3.2 s later, over sound both heard a second ago.
        let match = HeardMatch(peer: bobID, at: lan.now.wall - .seconds(1), lag: .milliseconds(3_200), confidence: 30)
        let attempt = NodeMachine.SoundAttempt(
            peer: bobID, verdict: "aligned", lag: .milliseconds(3_200), confidence: 30, heard: match)
        lan.on(alice) { $0.handle(.soundMatched(attempt), now: $1) }
        lan.deliverAll()
        for host in [alice, bob, carol] {
            let session = try #require(lan[host].machine.rooms[room])
            #expect(session.calibration.lag(of: bobID, behind: lan[alice].machine.identity.id) == .milliseconds(3_200))
            let entry = try #require(session.offsetReport.entries.first { $0.member.id == bobID })
            #expect(entry.heard?.matches == 1)
        }
        // The same lag again within 25 s is no news: no second event.
        let before = lan[alice].machine.vector(of: room)[lan[alice].machine.identity.id]
        lan.advance(.seconds(10))
        lan.on(alice) { $0.handle(.soundMatched(attempt), now: $1) }
        #expect(lan[alice].machine.vector(of: room)[lan[alice].machine.identity.id] == before)
        #expect(lan[alice].machine.listening?.attempts[bobID]?.verdict == "aligned")
        // A weak attempt is recorded for status but publishes nothing.
        let weak = NodeMachine.SoundAttempt(peer: bobID, verdict: "not enough sound", lag: nil, confidence: 4, heard: nil)
        lan.advance(.seconds(30))
        lan.on(alice) { $0.handle(.soundMatched(weak), now: $1) }
        #expect(lan[alice].machine.vector(of: room)[lan[alice].machine.identity.id] == before)
        #expect(lan[alice].machine.listening?.attempts[bobID]?.verdict == "not enough sound")
    }

    @Test func listenAsksTheShellOnceAndSaysWhatIsAlreadySo() {
        var lan = MachineLAN()
        let alice = lan.add("alice")
        lan.on(alice) { $0.handle(.consoleLine("/listen off", at: $1.wall), now: $1) }
        lan.on(alice) { $0.handle(.consoleLine("/listen", at: $1.wall), now: $1) }
        #expect(lan[alice].listenRequests == [true])
        #expect(lan[alice].notices.contains(.listeningAlready(on: false, source: nil)))
        lan.on(alice) { $0.handle(.listeningStarted(source: "device", at: $1.wall), now: $1) }
        lan.on(alice) { $0.handle(.consoleLine("/listen", at: $1.wall), now: $1) }
        lan.on(alice) { $0.handle(.consoleLine("/listen off", at: $1.wall), now: $1) }
        lan.on(alice) { $0.handle(.consoleLine("/listen loudly", at: $1.wall), now: $1) }
        #expect(lan[alice].listenRequests == [true, false])
        #expect(lan[alice].notices.contains(.listeningAlready(on: true, source: "device")))
        #expect(lan[alice].problems.contains {
            if case .invalid(let why) = $0 { why.contains("/listen") && why.contains("off") } else { false }
        })
        #expect(lan[alice].machine.consoleView(now: lan.now).status.room?.heardPeers != nil)
    }
}
