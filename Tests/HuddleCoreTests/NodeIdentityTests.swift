import Testing

@testable import HuddleCore

@Suite(.offThePool) struct NodeIdentityTests {
    let alice = NodeIdentity.generate()
    let mallory = NodeIdentity.generate()

    func chat(by identity: NodeIdentity, seq: UInt64 = 1, text: String = "touchdown!") -> Event {
        identity.sign(
            id: EventID(origin: identity.id, seq: seq), room: "superbowl", createdAt: .milliseconds(sinceEpoch: 1_700_000_000_000),
            context: [identity.id: seq - 1], body: .chat(text: text))
    }

    @Test func aSignedEventVerifies() {
        #expect(chat(by: alice).hasValidSignature)
    }

    @Test func theIdIsThePublicKeyAndSurvivesARestore() throws {
        let restored = try NodeIdentity(privateKeyBytes: alice.privateKeyBytes)
        #expect(restored.id == alice.id)
        #expect(NodeID(hex: alice.id.hex) == alice.id)
        #expect(alice.id != mallory.id)
        // A signature made by the restored key verifies as alice's.
        #expect(chat(by: restored).hasValidSignature)
    }

    @Test func aBadKeyFileIsAClearError() {
        #expect(throws: IdentityError.invalidPrivateKey(byteCount: 31)) {
            try NodeIdentity(privateKeyBytes: [UInt8](repeating: 7, count: 31))
        }
    }

    /// Each field, changed after signing, must break the signature.
    @Test(arguments: ["seq", "room", "createdAt", "context", "body", "signature"])
    func tamperingWithAnyFieldIsDetected(field: String) {
        let event = chat(by: alice, seq: 2)
        var (id, room, createdAt, context, body, signature) =
            (event.id, event.room, event.createdAt, event.context, event.body, event.signature)
        switch field {
        case "seq": id.seq += 1
        case "room": room = "worldcup"
        case "createdAt": createdAt += .milliseconds(1)
        case "context": context[mallory.id] = 1
        case "body": body = .chat(text: "touchdown?")
        default: signature[10] ^= 0x01
        }
        let tampered = Event(
            id: id, room: room, createdAt: createdAt, context: context, body: body, signature: signature)
        #expect(!tampered.hasValidSignature)
    }

    @Test func aForgedOriginIsRejected() {
        // Mallory signs an event but claims it came from alice.
        let forged = mallory.sign(
            id: EventID(origin: mallory.id, seq: 1), room: "superbowl", createdAt: .epoch, context: [:],
            body: .chat(text: "alice says: spoiler"))
        let claimed = Event(
            id: EventID(origin: alice.id, seq: 1), room: forged.room, createdAt: forged.createdAt,
            context: forged.context, body: forged.body, signature: forged.signature)
        #expect(!claimed.hasValidSignature)
        // So is a wrong-length signature.
        let short = Event(
            id: forged.id, room: forged.room, createdAt: forged.createdAt, context: forged.context,
            body: forged.body, signature: Array(forged.signature.prefix(63)))
        #expect(!short.hasValidSignature)
    }
}
