import Foundation
import Testing

@testable import HuddleCore

/// Private rooms: who can name, read and write them.
@Suite struct RoomKeyTests {
    // One derivation each (scrypt is slow on purpose), shared by the tests.
    static let key = try! RoomKey(room: "superbowl", passphrase: "touchdown")
    static let wrongPassphrase = try! RoomKey(room: "superbowl", passphrase: "touchdowns")
    static let otherRoom = try! RoomKey(room: "worldseries", passphrase: "touchdown")

    let alice = NodeIdentity.generate()
    let bob = NodeIdentity.generate()
    let base: Int64 = 1_700_000_000_000

    var key: RoomKey { Self.key }

    @Test func theSameNameAndPassphraseGiveTheSameIDAndAnythingElseAnother() throws {
        let again = try RoomKey(room: "superbowl", passphrase: "touchdown")
        #expect(again.id == key.id)
        #expect(key.id.hasPrefix("~") && key.id.count == 25)
        #expect(key.id.dropFirst().allSatisfy { Base32.alphabet.contains($0) })
        #expect(Self.wrongPassphrase.id != key.id)
        #expect(Self.otherRoom.id != key.id)
        #expect(!key.id.contains("superbowl"))
        #expect(RoomKey.isPrivate(key.id) && !RoomKey.isPrivate("superbowl"))
    }

    @Test func aPublicRoomNameCannotPassForAPrivateRoomsID() {
        #expect(RoomName.problem(with: key.id) != nil)
        #expect(RoomName.problem(with: "~superbowl") != nil)
    }

    @Test func aSealedEventTravelsWithoutItsTextAndOpensWithTheKey() throws {
        let event = alice.sign(
            id: EventID(origin: alice.id, seq: 1), room: key.id, createdAt: base, context: VersionVector(),
            body: .chat(text: "what a catch"), sealedWith: key)
        #expect(event.body == .chat(text: "what a catch"))
        let bytes = event.encoded()
        #expect(bytes.count == event.encodedByteCount)
        #expect(!Data(bytes).contains(Data("what a catch".utf8)))
        #expect(!Data(bytes).contains(Data("superbowl".utf8)))

        let received = try Event(decoding: bytes)
        #expect(received.body.isSealed)
        #expect(received.hasValidSignature)
        let opened = try #require(key.open(received))
        #expect(opened.body == .chat(text: "what a catch"))
        #expect(opened == event && opened == received)
        #expect(opened.encoded() == bytes)
        #expect(opened.hasValidSignature)
    }

    @Test func anotherKeyOpensNothingAndAMovedBodyDoesNotOpen() throws {
        let event = alice.sign(
            id: EventID(origin: alice.id, seq: 1), room: key.id, createdAt: base, context: VersionVector(),
            body: .chat(text: "secret"), sealedWith: key)
        let received = try Event(decoding: event.encoded())
        #expect(Self.wrongPassphrase.open(received) == nil)
        guard case .sealed(let sealed) = received.body else { Issue.record("not sealed"); return }

        // Bob copies alice's sealed body into his own event: bound to alice#1, it does not open.
        let copied = bob.sign(
            id: EventID(origin: bob.id, seq: 1), room: key.id, createdAt: base, context: VersionVector(),
            body: .sealed(bytes: sealed))
        #expect(copied.hasValidSignature)
        #expect(key.open(copied) == nil)

        // So does alice's own body moved to another seq, and a flipped bit.
        let moved = alice.sign(
            id: EventID(origin: alice.id, seq: 2), room: key.id, createdAt: base, context: VersionVector([alice.id: 1]),
            body: .sealed(bytes: sealed))
        #expect(key.open(moved) == nil)
        var flipped = sealed
        flipped[20] ^= 1
        let tampered = alice.sign(
            id: EventID(origin: alice.id, seq: 1), room: key.id, createdAt: base, context: VersionVector(),
            body: .sealed(bytes: flipped))
        #expect(key.open(tampered) == nil)
    }

    @Test func twoMembersChatInAPrivateRoomAndAWrongKeyReadsNothing() throws {
        var aliceRoom = RoomSession(room: key.id, reader: alice.id, key: key)
        var bobRoom = RoomSession(room: key.id, reader: bob.id, key: key)
        let outsiderKey = Self.wrongPassphrase
        let guessed = RoomKey(name: "superbowl", master: Array(repeating: 7, count: 32))
        let outsider = RoomSession(room: guessed.id, reader: bob.id, key: guessed)

        let join = try aliceRoom.compose(.join(nick: "alice"), now: base, signer: alice).event
        let chat = try aliceRoom.compose(.chat(text: "kickoff soon"), now: base + 1, signer: alice).event
        for event in [join, chat] {
            let wire = try Event(decoding: event.encoded())
            let opened = try #require(bobRoom.opened(wire))
            _ = bobRoom.receive(opened, now: base + 2)
            #expect(outsider.opened(wire) == nil)
            #expect(outsiderKey.open(wire) == nil)
        }
        #expect(bobRoom.history(last: 5).map(\.body) == [.chat(text: "kickoff soon")])
        #expect(bobRoom.members.map(\.nick) == ["alice"])

        // A public room takes no sealed body, and a private room no plain one.
        #expect(RoomSession(room: "superbowl", reader: bob.id).opened(try Event(decoding: chat.encoded())) == nil)
        let plain = alice.sign(
            id: EventID(origin: alice.id, seq: 3), room: key.id, createdAt: base, context: VersionVector([alice.id: 2]),
            body: .chat(text: "in clear"))
        #expect(bobRoom.opened(plain) == nil)
    }

    @Test func aRestoredPrivateRoomOpensWhatTheStoreKeptSealed() throws {
        var aliceRoom = RoomSession(room: key.id, reader: alice.id, key: key)
        let join = try aliceRoom.compose(.join(nick: "alice"), now: base, signer: alice).event
        let chat = try aliceRoom.compose(.chat(text: "stored sealed"), now: base + 1, signer: alice).event
        let stored = try [join, chat].map { try Event(decoding: $0.encoded()) }
        var restored = RoomSession(room: key.id, reader: alice.id, key: key)
        _ = restored.restore(stored, shown: [chat.id], now: base + 5)
        #expect(restored.history(last: 5).map(\.body) == [.chat(text: "stored sealed")])
    }

    @Test func sealedBodiesHaveLimitsOnTheWire() throws {
        let longest = String(repeating: "x", count: WireLimits.maxChatTextBytes)
        let event = alice.sign(
            id: EventID(origin: alice.id, seq: 1), room: key.id, createdAt: base, context: VersionVector(),
            body: .chat(text: longest), sealedWith: key)
        try event.validate()
        guard case .sealed(let sealed) = event.wireBody else { Issue.record("not sealed"); return }
        #expect(sealed.count == WireLimits.maxSealedBytes)

        let tooLong = alice.sign(
            id: EventID(origin: alice.id, seq: 1), room: key.id, createdAt: base, context: VersionVector(),
            body: .chat(text: longest + "x"), sealedWith: key)
        #expect(throws: WireError.self) { try tooLong.validate() }

        let short = alice.sign(
            id: EventID(origin: alice.id, seq: 1), room: key.id, createdAt: base, context: VersionVector(),
            body: .sealed(bytes: Array(repeating: 0, count: WireLimits.minSealedBytes - 1)))
        #expect(throws: WireError.self) { try Event(decoding: short.encoded()) }
    }
}
