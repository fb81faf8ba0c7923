import Foundation
import HuddleCore
import Logging
import Testing

@testable import HuddleNode

/// The store writer: what it is handed reaches SQLite on disk in order, a commit waits for its
/// writes, a clean stop loses nothing, and batches that queue up share one transaction.
@Suite struct StoreWriterTests {
    let room = "superbowl"

    func events(_ count: Int, by identity: NodeIdentity = .generate()) throws -> [Event] {
        var session = RoomSession(room: room, reader: identity.id)
        return try (0..<count).map { try session.compose(.chat(text: "line \($0)"), now: .epoch + .seconds(1), signer: identity).event }
    }

    func temporaryStore() throws -> (HuddleStore, String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("huddle-writer-\(UUID())").path
        return (try HuddleStore(directory: dir), dir)
    }

    @Test func aCommitReturnsOnceItsWritesAreInTheStore() async throws {
        let (store, _) = try temporaryStore()
        let writer = StoreWriter(store: store, logger: Logger(label: "test"))
        let made = try events(3)
        await writer.commit([.events(made, own: true), .joined(room, true)])
        #expect(try store.events(room: room) == made)
        #expect(try store.joinedRooms() == [room])
        #expect(writer.eventsStored == 3)
    }

    @Test func handedOverWritesCommitInTheirOrderWhoeverWaitsFirst() async throws {
        let (store, _) = try temporaryStore()
        let writer = StoreWriter(store: store, logger: Logger(label: "test"), commitDelay: .milliseconds(20))
        let made = try events(6)
        // Handed over in order on one thread, as the node does; waited for in the other order,
        // from tasks that may start in any order.
        let first = writer.hand([.events(Array(made[..<3]), own: true), .currentRoom("first")])
        let second = writer.hand([.events(Array(made[3...]), own: true), .currentRoom(room)])
        await writer.committed(second)
        // The second's commit holds the first's too, and the room set last stands.
        #expect(try store.events(room: room) == made)
        #expect(try store.currentRoom == room)
        // A wait for writes already committed returns (nothing more will be committed to end it).
        await writer.committed(first)
    }

    @Test func queuedWritesLandInOrderAndAFlushLosesNothing() throws {
        let (store, dir) = try temporaryStore()
        let writer = StoreWriter(store: store, logger: Logger(label: "test"), commitDelay: .milliseconds(20))
        let made = try events(40)
        for event in made {
            writer.enqueue([.events([event], own: false), .shown([event.id], room: room, at: .epoch + .seconds(2))])
        }
        writer.enqueue([.currentRoom("first"), .currentRoom(room)])
        writer.flush()
        try store.close()
        // Read back from the file, as a restarted node would.
        let reopened = try reopenedStore(dir)
        #expect(try reopened.events(room: room).count == 40)
        #expect(try reopened.shownIDs(room: room) == Set(made.map(\.id)))
        #expect(try reopened.currentRoom == room)
        // Forty batches handed over during slow commits went in a few transactions.
        #expect(writer.commits < 40)
        #expect(writer.commits >= 1)
    }

    @Test func aFailingWriteIsLoggedAndTheWriterGoesOn() async throws {
        let (store, dir) = try temporaryStore()
        let writer = StoreWriter(store: store, logger: Logger(label: "test"))
        try store.close()
        writer.enqueue([.joined(room, true)])
        writer.flush()
        #expect(writer.commits == 0)
        // A writer over a store that works again commits what it is given next.
        let reopened = try HuddleStore(directory: dir)
        let second = StoreWriter(store: reopened, logger: Logger(label: "test"))
        await second.commit([.joined(room, true)])
        #expect(try reopened.joinedRooms() == [room])
    }

    @Test func pairedDevicesGoThroughTheWriterAndAreThereAfterARestart() throws {
        let (store, dir) = try temporaryStore()
        let writer = StoreWriter(store: store, logger: Logger(label: "test"))
        let phone = WebDevice(id: String(repeating: "a", count: 32), name: "phone", key: .init(repeating: 7, count: 32), pairedAt: .epoch + .seconds(5))
        let tablet = WebDevice(id: String(repeating: "b", count: 32), name: "tablet", key: .init(repeating: 8, count: 32), pairedAt: .epoch + .seconds(9))
        writer.enqueue([.webDevice(phone)])
        writer.enqueue([.webDevice(tablet), .webDeviceRevoked(id: phone.id)])
        writer.flush()
        try store.close()
        #expect(try reopenedStore(dir).webDevices() == [tablet])
    }
}
