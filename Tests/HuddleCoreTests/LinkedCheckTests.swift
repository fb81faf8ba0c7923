import Testing

@testable import HuddleCore

/// Links (`Event.previous`): one signature check for a run of an origin's events, and never an
/// event taken that its origin did not make.
@Suite(.offThePool) struct LinkedCheckTests {
    let alice = try! NodeIdentity(privateKeyBytes: [UInt8](repeating: 1, count: 32))
    let mallory = try! NodeIdentity(privateKeyBytes: [UInt8](repeating: 9, count: 32))

    /// `count` events signed by `author` in one room, each linked to the one before, as a node
    /// makes them (``RoomLog/nextEventHeader(origin:after:)``).
    func run(of count: Int, by author: NodeIdentity, room: String = "superbowl") -> [Event] {
        var log = RoomLog(room: room)
        return (1...count).map { n in
            let header = log.nextEventHeader(origin: author.id)
            let event = author.sign(
                id: header.id, room: room, createdAt: .milliseconds(sinceEpoch: Int64(n)), context: header.context,
                previous: header.previous, body: n == 1 ? .join(nick: "alice") : .chat(text: "line \(n)"))
            _ = log.insert(event)
            return event
        }
    }

    /// `event` with its body changed and its signature kept: what a relay that forges would send.
    func tampered(_ event: Event, text: String) -> Event {
        Event(
            id: event.id, room: event.room, createdAtMilliseconds: event.createdAtMilliseconds, context: event.context,
            previous: event.previous, body: .chat(text: text), signature: event.signature)
    }

    @Test func aNodeLinksEachEventToTheOneBeforeItButItsFirst() {
        let events = run(of: 4, by: alice)
        #expect(events[0].previous == .none)
        for n in 1..<4 { #expect(events[n].previous == events[n - 1].digest) }
        #expect(events.allSatisfy { $0.hasValidSignature })
    }

    @Test func aRunCostsOneSignatureCheckInAnyOrder() {
        let events = run(of: 200, by: alice)
        let check = LinkedCheck(events.reversed())
        #expect(check.needed == [0], "only the top of the run: seq 200, first in this order")
        #expect(LinkedCheck.valid(events) == events)
        var shuffler = SplitMix64(seed: 7)
        let shuffled = events.shuffled(using: &shuffler)
        #expect(LinkedCheck(shuffled).needed.map { shuffled[$0].seq } == [200])
        #expect(LinkedCheck.valid(shuffled) == shuffled)
    }

    @Test func eachOriginAndRoomIsARunOfItsOwn() {
        let batch = run(of: 30, by: alice) + run(of: 20, by: mallory) + run(of: 10, by: alice, room: "halftime")
        #expect(LinkedCheck(batch).needed.map { batch[$0].seq }.sorted() == [10, 20, 30])
        #expect(LinkedCheck.valid(batch) == batch)
    }

    @Test func aForgedEventInARunIsRefusedAndTheRestKept() {
        var events = run(of: 50, by: alice)
        events[24] = tampered(events[24], text: "the score is 3-0")
        let valid = LinkedCheck.valid(events)
        #expect(valid.count == 49)
        #expect(!valid.contains(events[24]))
        #expect(valid.allSatisfy { $0.hasValidSignature }, "below the forgery each event checked itself")
    }

    @Test func aForgedTopTakesNothingWithItAndTheEventsBelowCheckThemselves() {
        var events = run(of: 20, by: alice)
        events[19] = tampered(events[19], text: "forged")
        #expect(LinkedCheck(events).needed == [19])
        #expect(LinkedCheck.valid(events) == Array(events.prefix(19)))
    }

    @Test func aStrangersLinkToForgedEventsVouchesForNothing() {
        // Mallory makes a run in alice's name: linked to each other, signed by mallory's key.
        let forged = run(of: 10, by: mallory).map { event in
            Event(
                id: EventID(origin: alice.id, seq: event.seq), room: event.room,
                createdAtMilliseconds: event.createdAtMilliseconds, context: event.context, previous: event.previous,
                body: event.body, signature: event.signature)
        }
        #expect(LinkedCheck.valid(forged).isEmpty)
        // A genuine top cannot vouch for a forged event below it: the digest differs.
        let genuine = run(of: 10, by: alice)
        let mixed = Array(genuine.prefix(4)) + [tampered(genuine[4], text: "x")] + Array(genuine.suffix(5))
        #expect(LinkedCheck.valid(mixed) == mixed.enumerated().filter { $0.offset != 4 }.map(\.element))
    }

    @Test func eventsWithNoLinkEachCheckTheirOwnSignature() {
        let unlinked = run(of: 5, by: alice).map { event in
            alice.sign(
                id: event.id, room: event.room, createdAt: event.createdAt, context: event.context, body: event.body)
        }
        #expect(LinkedCheck(unlinked).needed == [0, 1, 2, 3, 4])
        #expect(LinkedCheck.valid(unlinked) == unlinked)
    }

    @Test func twoVersionsOfOneSeqAreBothTakenSoTheEquivocationIsSeen() {
        let events = run(of: 6, by: alice)
        let other = alice.sign(
            id: events[2].id, room: events[2].room, createdAt: events[2].createdAt, context: events[2].context,
            previous: events[2].previous, body: .chat(text: "said otherwise"))
        let batch = events + [other]
        #expect(LinkedCheck.valid(batch) == batch)
        #expect(LinkedCheck(batch).needed.contains(6), "the version no link names checks its own signature")
    }

    @Test func anEventWithNoLinkIsSignedAndStoredAsBeforeLinks() throws {
        let event = alice.sign(
            id: EventID(origin: alice.id, seq: 3), room: "superbowl", createdAt: .milliseconds(sinceEpoch: 5),
            context: [alice.id: 2], body: .chat(text: "from a version 5 store"))
        #expect(event.signedBytes.starts(with: Event.signingDomain))
        #expect(event.signedBytes.count == Event.signingDomain.count + event.encodedByteCount - 32 - 64)
        // The bytes a version-5 node stored: the same event without the 32 bytes of the link. The
        // store's migration puts zeros there, and the signature still checks.
        var old = event.encoded()
        old.removeSubrange(40..<72)
        let migrated = Array(old.prefix(40)) + [UInt8](repeating: 0, count: 32) + Array(old.dropFirst(40))
        let decoded = try Event(decoding: migrated)
        #expect(decoded == event && decoded.hasValidSignature)
    }

    @Test func theLinkTravelsUnderTheSignature() throws {
        let events = run(of: 2, by: alice)
        let decoded = try Event(decoding: events[1].encoded())
        #expect(decoded.previous == events[0].digest && decoded.hasValidSignature)
        #expect(decoded.signedBytes.starts(with: Event.linkedSigningDomain))
        // The same event naming another predecessor: its signature no longer checks.
        var bytes = events[1].encoded()
        bytes[40] ^= 1
        #expect(try !Event(decoding: bytes).hasValidSignature)
    }

    @Test func anEventAfterAVoidHasNoLink() {
        var log = RoomLog(room: "superbowl")
        for event in run(of: 3, by: alice) { _ = log.insert(event) }
        #expect(log.nextEventHeader(origin: alice.id).previous == log.event(EventID(origin: alice.id, seq: 3))!.digest)
        let void = log.nextEventHeader(origin: alice.id, after: 514)
        #expect(void.id.seq == 515 && void.previous == .none)
    }
}
