import Foundation
import GRDB
import HuddleCore
import Testing

@testable import HuddleNode

/// A store written by an earlier version opens, migrated, with nothing lost.
@Suite struct StoreMigrationTests {
    let alice = NodeIdentity.generate()

    /// An event's bytes as wire version 5 stored them: no link field.
    func version5Bytes(_ event: Event) -> Data {
        var bytes = event.encoded()
        bytes.removeSubrange(40..<72)
        return Data(bytes)
    }

    @Test func eventsAndProofsStoredBeforeLinksReadBackAndStillCheck() throws {
        try withTemporaryDirectory { tmp in
            let room = "superbowl"
            // As a version-5 node made them: no links.
            let events: [Event] = (1...3).map { (seq: UInt64) -> Event in
                let context: VersionVector = seq == 1 ? [:] : [alice.id: seq - 1]
                let body: EventBody = seq == 1 ? .join(nick: "alice") : .chat(text: "line \(seq)")
                return alice.sign(
                    id: EventID(origin: alice.id, seq: seq), room: room, createdAt: .milliseconds(sinceEpoch: 9),
                    context: context, body: body)
            }
            let twin = alice.sign(
                id: events[2].id, room: room, createdAt: .milliseconds(sinceEpoch: 9), context: events[2].context,
                body: .chat(text: "said otherwise"))
            // A version-5 store: its migrations, and its rows as that version wrote them.
            let queue = try DatabaseQueue(path: tmp + "/" + StoreSchema.fileName)
            try StoreSchema.migrator.migrate(queue, upTo: "v4: web devices")
            try queue.write { db in
                for event in events {
                    try db.execute(
                        sql: "INSERT INTO event (room, origin, seq, created_at, kind, text, bytes) VALUES (?, ?, ?, 9, 'chat', '', ?)",
                        arguments: [room, Data(alice.id.bytes), Int64(event.seq), version5Bytes(event)])
                }
                try db.execute(
                    sql: "INSERT INTO fault (room, origin, seq, first, second) VALUES (?, ?, 3, ?, ?)",
                    arguments: [room, Data(alice.id.bytes), version5Bytes(events[2]), version5Bytes(twin)])
            }
            try queue.close()

            let store = try HuddleStore(directory: tmp)
            let read = try store.events(room: room)
            #expect(read == events)
            #expect(read.allSatisfy { $0.previous == .none && $0.hasValidSignature })
            let proofs = try store.faults(room: room)
            #expect(proofs.map { Set([$0.first, $0.second]) } == [Set([events[2], twin])])
        }
    }
}
