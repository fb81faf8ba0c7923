import Foundation
import Testing

@testable import HuddleCore

/// Private rooms: who can name, read and write them.
@Suite(.offThePool) struct RoomKeyTests {
    // One derivation each (scrypt is slow on purpose), shared by the tests.
    static let key = try! RoomKey(room: "superbowl", passphrase: "touchdown")
    static let wrongPassphrase = try! RoomKey(room: "superbowl", passphrase: "touchdowns")
    static let otherRoom = try! RoomKey(room: "worldseries", passphrase: "touchdown")

    let alice = NodeIdentity.generate()
    let bob = NodeIdentity.generate()
    let base = WallTime.milliseconds(sinceEpoch: 1_700_000_000_000)

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
        #expect(RoomName.problem(with: "@bob") != nil)
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
        var bobRoom = RoomSession(room: key.id, reader: bob.id, key: key, shield: nil)
        let outsiderKey = Self.wrongPassphrase
        let guessed = RoomKey(name: "superbowl", master: Array(repeating: 7, count: 32))
        let outsider = RoomSession(room: guessed.id, reader: bob.id, key: guessed)

        let join = try aliceRoom.compose(.join(nick: "alice"), now: base, signer: alice).event
        let chat = try aliceRoom.compose(.chat(text: "kickoff soon"), now: base + .milliseconds(1), signer: alice).event
        for event in [join, chat] {
            let wire = try Event(decoding: event.encoded())
            let opened = try #require(bobRoom.opened(wire))
            _ = bobRoom.receive(opened, now: base + .milliseconds(2))
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
        let chat = try aliceRoom.compose(.chat(text: "stored sealed"), now: base + .milliseconds(1), signer: alice).event
        let stored = try [join, chat].map { try Event(decoding: $0.encoded()) }
        var restored = RoomSession(room: key.id, reader: alice.id, key: key)
        _ = restored.restore(stored, shown: [chat.id], now: base + .milliseconds(5))
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

    // MARK: Name checks

    @Test func aNameCheckTellsTheSameNameUnderAnotherPassphraseAndNothingElse() throws {
        let tag = key.nameTag(for: alice.id, room: key.id)
        #expect(tag.count == WireLimits.roomTagBytes && tag != WireLimits.noRoomTag)
        // bob, in superbowl under another passphrase, sees alice is in a superbowl he cannot read.
        #expect(Self.wrongPassphrase.isSameNameOtherPassphrase(tag, from: alice.id, room: key.id))
        // Not for his own room (same id), another room's name, another sender, or no tag.
        #expect(!key.isSameNameOtherPassphrase(tag, from: alice.id, room: key.id))
        #expect(!Self.otherRoom.isSameNameOtherPassphrase(tag, from: alice.id, room: key.id))
        #expect(!Self.wrongPassphrase.isSameNameOtherPassphrase(tag, from: bob.id, room: key.id))
        #expect(!Self.wrongPassphrase.isSameNameOtherPassphrase(WireLimits.noRoomTag, from: alice.id, room: key.id))
        // A direct room has no name check.
        #expect(RoomKey(name: "@bob", master: Array(repeating: 1, count: 32)).nameTag(for: alice.id, room: key.id)
            == WireLimits.noRoomTag)
    }

    // MARK: Direct messages

    @Test func twoNodesAgreeOnOneDirectRoomThatAThirdCannotDerive() throws {
        let carol = NodeIdentity.generate()
        let fromAlice = try #require(alice.directKey(with: bob.id, peerAgreementKey: bob.agreementPublicKey, name: "@bob"))
        let fromBob = try #require(bob.directKey(with: alice.id, peerAgreementKey: alice.agreementPublicKey, name: "@alice"))
        #expect(fromAlice.id == fromBob.id && RoomKey.isPrivate(fromAlice.id))
        let carolAndBob = try #require(carol.directKey(with: bob.id, peerAgreementKey: bob.agreementPublicKey, name: "@bob"))
        #expect(carolAndBob.id != fromAlice.id)

        let event = alice.sign(
            id: EventID(origin: alice.id, seq: 1), room: fromAlice.id, createdAt: base, context: VersionVector(),
            body: .chat(text: "psst"), sealedWith: fromAlice)
        let wire = try Event(decoding: event.encoded())
        #expect(fromBob.open(wire)?.body == .chat(text: "psst"))
        #expect(carolAndBob.open(wire) == nil)

        // The agreement key survives a restart: it comes from the signing key.
        let restored = try NodeIdentity(privateKeyBytes: alice.privateKeyBytes)
        #expect(restored.agreementPublicKey == alice.agreementPublicKey)
        #expect(alice.directKey(with: bob.id, peerAgreementKey: WireLimits.noAgreementKey, name: "@bob") == nil)
    }

    @Test(arguments: [
        // u = 1 (order 4), an order-8 point, p − 1 (order 2), p + 1 (1 again, not reduced).
        [UInt8(1)] + [UInt8](repeating: 0, count: 31),
        [0xe0, 0xeb, 0x7a, 0x7c, 0x3b, 0x41, 0xb8, 0xae, 0x16, 0x56, 0xe3, 0xfa, 0xf1, 0x9f, 0xc4, 0x6a,
         0xda, 0x09, 0x8d, 0xeb, 0x9c, 0x32, 0xb1, 0xfd, 0x86, 0x62, 0x05, 0x16, 0x5f, 0x49, 0xb8, 0x00],
        [0xec] + [UInt8](repeating: 0xff, count: 30) + [0x7f],
        [0xee] + [UInt8](repeating: 0xff, count: 30) + [0x7f],
    ])
    func aSmallOrderAgreementKeyGivesNoDirectRoom(key: [UInt8]) {
        // Any clamped scalar times a point of small order is the identity: the all-zero secret,
        // from which anyone could derive the room key.
        let alice = NodeIdentity.generate()
        let mallory = NodeIdentity.generate()
        #expect(alice.directKey(with: mallory.id, peerAgreementKey: key, name: "@mallory") == nil)
    }

    @Test func aDirectRoomHoldsMessagesBackByTheOffsetsOfASharedRoom() throws {
        // In superbowl, alice is 2 s ahead of bob.
        var shared = RoomSession(room: "superbowl", reader: bob.id)
        _ = try shared.compose(.join(nick: "bob"), now: base, signer: bob)
        _ = shared.receive(alice.event(1, .join(nick: "alice"), at: base, for: shared), now: base)
        _ = shared.receive(alice.event(2, .mark(label: "kickoff"), at: base + .seconds(1), for: shared), now: base + .seconds(1))
        _ = try shared.compose(.mark(label: "kickoff"), now: base + .seconds(3), signer: bob)
        #expect(shared.calibration.lag(of: bob.id, behind: alice.id) == .seconds(2))

        let directKey = try #require(bob.directKey(with: alice.id, peerAgreementKey: alice.agreementPublicKey, name: "@alice"))
        var direct = RoomSession(room: directKey.id, reader: bob.id, key: directKey)
        _ = direct.follow(shared.calibration, now: base + .seconds(4))
        let aliceKey = try #require(alice.directKey(with: bob.id, peerAgreementKey: bob.agreementPublicKey, name: "@bob"))
        let psst = alice.sign(
            id: EventID(origin: alice.id, seq: 1), room: aliceKey.id, createdAt: base + .seconds(5), context: VersionVector(),
            body: .chat(text: "psst"), sealedWith: aliceKey)
        #expect(direct.receive(try #require(direct.opened(psst)), now: base + .seconds(5)).isEmpty)
        #expect(direct.heldBackCount == 1)
        #expect(direct.wake(now: base + .seconds(7)).count == 1)
    }
}
