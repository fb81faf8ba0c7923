import HuddleCore
import Testing

@testable import HuddleNode

@Suite struct SignatureCheckTests {
    @Test(arguments: [1, 63, 64, 500])
    func keepsValidEventsInOrderAndDropsForgeries(count: Int) async {
        let alice = NodeIdentity.generate()
        var events = (1...count).map { seq in
            alice.sign(
                id: EventID(origin: alice.id, seq: UInt64(seq)), room: "superbowl", createdAt: .epoch + .milliseconds(seq),
                context: [alice.id: UInt64(seq - 1)], body: .chat(text: "message \(seq)"))
        }
        // Every seventh event is tampered with after signing.
        for index in stride(from: 0, to: count, by: 7) {
            let event = events[index]
            events[index] = Event(
                id: event.id, room: event.room, createdAt: event.createdAt + .milliseconds(1), context: event.context,
                body: event.body, signature: event.signature)
        }
        let valid = await SignatureCheck.valid(events)
        let expected = events.enumerated().filter { $0.offset % 7 != 0 }.map(\.element)
        #expect(valid == expected)
    }
}
