import Foundation
import HuddleCore
import Logging
import Testing

@testable import HuddleNode

/// The journal a line's own event and a shown record land in before the store's commit: what a
/// killed process had journaled is in the store at the next start, nothing the store already
/// holds comes back, and a torn or stale entry ends the replay.
@Suite struct CommitJournalTests {
    let room = "superbowl"
    let shownAt = WallTime.epoch + .seconds(7)

    func events(_ count: Int, by identity: NodeIdentity = .generate()) throws -> [Event] {
        var session = RoomSession(room: room, reader: identity.id)
        return try (0..<count).map { try session.compose(.chat(text: "line \($0)"), now: .epoch + .seconds(1), signer: identity).event }
    }

    func temporaryDirectory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("huddle-journal-\(UUID())").path
    }

    @Test func anEntryReadsBackAsWritten() throws {
        let (mine, theirs) = (try events(2), try events(1))
        let writes: [StoreWrite] = [
            .events(mine, own: true), .events(theirs, own: false), .shown(theirs.map(\.id), room: room, at: shownAt),
        ]
        let bytes = JournalEntry.bytes(writes, number: 5)
        let entries = JournalEntry.entries(in: bytes)
        #expect(entries.count == 1)
        #expect(entries.first?.number == 5)
        // Read back, the events are one run (whose they are matters to the gate only, not the store).
        #expect(entries.first?.writes == [.events(mine + theirs, own: false), .shown(theirs.map(\.id), room: room, at: shownAt)])
    }

    @Test func aLineGoesToTheJournalAndABurstOrAnythingElseDoesNot() throws {
        let line = try events(1)
        #expect(JournalEntry.canHold([.events(line, own: true)]))
        #expect(JournalEntry.canHold([.events(line, own: false), .shown(line.map(\.id), room: room, at: shownAt)]))
        #expect(!JournalEntry.canHold([.events(try events(JournalEntry.maximumEvents + 1), own: true)]))
        #expect(!JournalEntry.canHold([.events(line, own: true), .lease(room: room, through: 512)]))
        #expect(!JournalEntry.canHold([.events(line, own: true), .joined(room, true)]))
    }

    @Test func aTornOrStaleEntryEndsTheReplay() throws {
        let made = try events(3)
        let first = JournalEntry.bytes([.events([made[0]], own: true)], number: 1)
        let second = JournalEntry.bytes([.events([made[1]], own: true)], number: 2)
        let third = JournalEntry.bytes([.events([made[2]], own: true)], number: 3)
        #expect(JournalEntry.entries(in: first + second + third).map(\.number) == [1, 2, 3])
        // A write a crash tore: the second entry's last byte missing.
        #expect(JournalEntry.entries(in: first + second.dropLast()).map(\.number) == [1])
        // A byte changed under the check (what a power cut can leave of a page).
        var damaged = second
        damaged[damaged.count - 10] ^= 0x40
        #expect(JournalEntry.entries(in: first + damaged + third).map(\.number) == [1])
        // An entry of an earlier file's numbering after the first: stale, so it ends there.
        #expect(JournalEntry.entries(in: first + third).map(\.number) == [1])
        // Zeros where the file was extended but nothing written.
        #expect(JournalEntry.entries(in: first + [UInt8](repeating: 0, count: 64)).map(\.number) == [1])
    }

    @Test func whatAKilledRunJournaledIsInTheStoreAtTheNextStart() throws {
        let dir = temporaryDirectory()
        let store = try HuddleStore(directory: dir)
        let journal = try CommitJournal(directory: dir, store: store)
        let mine = try events(2)
        let theirs = try events(1)
        // Journaled and never committed: the process was killed before the writer got to it.
        #expect(try journal.append([.events(mine, own: true)]) == 1)
        #expect(try journal.append([.events(theirs, own: false), .shown(theirs.map(\.id), room: room, at: shownAt)]) == 2)
        #expect(try store.events(room: room).isEmpty)
        try store.close()

        let reopened = try reopenedStore(dir)
        let next = try CommitJournal(directory: dir, store: reopened)
        #expect(Set(try reopened.events(room: room)) == Set(mine + theirs))
        #expect(try reopened.shownIDs(room: room) == Set(theirs.map(\.id)))
        #expect(try reopened.journalThrough() == 2)
        // The file is empty again, and the numbering goes on past what the store holds.
        #expect(try FileManager.default.attributesOfItem(atPath: next.path)[.size] as? Int == 0)
        #expect(next.nextNumber == 3)
    }

    @Test func entriesTheStoreCommittedAreNotPutBack() async throws {
        let dir = temporaryDirectory()
        let store = try HuddleStore(directory: dir)
        let journal = try CommitJournal(directory: dir, store: store)
        let writer = StoreWriter(store: store, logger: Logger(label: "test"))
        let theirs = try events(2)
        let writes: [StoreWrite] = [.events(theirs, own: false)]
        let number = try journal.append(writes)
        await writer.committed(writer.hand(writes, journaled: number))
        // Dropped for good after its commit, while the journal still holds its entry.
        await writer.commit([.delete([theirs[0].id], room: room)])
        try store.close()

        let reopened = try reopenedStore(dir)
        _ = try CommitJournal(directory: dir, store: reopened)
        #expect(try reopened.events(room: room) == [theirs[1]])
    }

    @Test func theJournalIsUsedOnlyOnceWhatItReliesOnIsCommitted() async throws {
        let dir = temporaryDirectory()
        let store = try HuddleStore(directory: dir)
        let writer = StoreWriter(store: store, logger: Logger(label: "test"), commitDelay: .milliseconds(200))
        #expect(writer.mayJournal(backlog: 4))
        // A peer's event held back, queued outside the journal: a shown record for it must not
        // land in the journal before the event is in the store.
        writer.enqueue([.events(try events(1), own: false)])
        #expect(!writer.mayJournal(backlog: 4))
        writer.flush()
        #expect(writer.mayJournal(backlog: 4))
        // Journaled hand-overs count against the backlog.
        let handed = (1...2).map { writer.hand([.currentRoom(room)], journaled: UInt64($0)) }
        #expect(!writer.mayJournal(backlog: 2))
        await writer.committed(handed[1])
        #expect(writer.mayJournal(backlog: 2))
        #expect(writer.holds(handed[1]))
        #expect(try store.journalThrough() == 2)
    }

    @Test func aJournalThatCannotBeOpenedSaysWhere() throws {
        let dir = temporaryDirectory()
        let store = try HuddleStore(directory: dir)
        try FileManager.default.createDirectory(atPath: dir + "/journal", withIntermediateDirectories: false)
        #expect(throws: StoreError.self) { try CommitJournal(directory: dir, store: store) }
    }
}
