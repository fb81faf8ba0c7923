import Foundation
import HuddleCore
import Testing

@testable import HuddleNode

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A fresh directory under the system's temporary directory, removed when `body` returns.
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    var template = Array((NSTemporaryDirectory() + "/huddle-store-XXXXXX").utf8CString)
    let path = try template.withUnsafeMutableBufferPointer { buffer in
        guard let made = mkdtemp(buffer.baseAddress!) else { throw POSIXError(.EIO) }
        return String(cString: made)
    }
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// The store of `directory` opened again right after it was closed, as a restarted node opens it.
///
/// A store's lock is an `flock` on a descriptor that `close()` closes; a process that another
/// test spawns at that moment holds a copy of every descriptor from its fork until its exec,
/// and with it the lock: in a C loop beside two threads spawning `/bin/true`, 13 % of such
/// re-locks failed at once. So an "in use" here is tried again for up to 2 s; a lock that
/// `close()` did not give back still fails.
func reopenedStore(_ directory: String) throws -> HuddleStore {
    let started = ContinuousClock.now
    while true {
        do {
            return try HuddleStore(directory: directory)
        } catch StoreError.inUse where ContinuousClock.now - started < .seconds(2) {
            usleep(10_000)
        }
    }
}

/// The permission bits of a file, such as 0o600.
func permissions(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
}

extension RoomLog {
    /// Makes `author`'s next event in this room, signed, and inserts it here too.
    mutating func append(_ author: NodeIdentity, _ body: EventBody, at createdAt: WallTime) -> Event {
        let header = nextEventHeader(origin: author.id)
        let event = author.sign(id: header.id, room: room, createdAt: createdAt, context: header.context, body: body)
        _ = insert(event)
        return event
    }
}

/// Sorts events by id, the order ``HuddleStore/events(room:)`` returns them in.
func byID(_ events: [Event]) -> [Event] {
    events.sorted { $0.id < $1.id }
}

@Suite struct StoreTests {
    let alice = NodeIdentity.generate()
    let bob = NodeIdentity.generate()

    // MARK: Files and identity

    @Test func identityPersistsAndFilesAreOwnerOnly() throws {
        try withTemporaryDirectory { tmp in
            let dir = tmp + "/data/alice"
            var generated = 0
            let generate = {
                generated += 1
                return alice
            }
            let first = try HuddleStore(directory: dir)
            #expect(try first.storedIdentity() == nil)
            #expect(try first.loadOrCreateIdentity(generate: generate).id == alice.id)
            #expect(try first.loadOrCreateIdentity(generate: generate).id == alice.id)
            try first.close()

            let second = try reopenedStore(dir)
            #expect(try second.loadOrCreateIdentity(generate: generate).id == alice.id)
            #expect(generated == 1)
            #expect(try permissions(dir) == 0o700)
            #expect(try permissions(second.path) == 0o600)
            for sidecar in [second.path + "-wal", second.path + "-shm"]
            where FileManager.default.fileExists(atPath: sidecar) {
                #expect(try permissions(sidecar) == 0o600)
            }
        }
    }

    @Test func aLooseFileModeIsRepairedOnOpen() throws {
        try withTemporaryDirectory { dir in
            let path = try HuddleStore(directory: dir).path
            #expect(chmod(path, 0o644) == 0)
            _ = try reopenedStore(dir)
            #expect(try permissions(path) == 0o600)
        }
    }

    @Test func aCorruptKeyIsAnErrorNotANewIdentity() throws {
        try withTemporaryDirectory { dir in
            let store = try HuddleStore(directory: dir)
            _ = try store.loadOrCreateIdentity(generate: { alice })
            try store.execute(sql: "UPDATE identity SET private_key = x'0102'")
            try store.close()

            let reopened = try reopenedStore(dir)
            let error = #expect(throws: StoreError.self) {
                try reopened.loadOrCreateIdentity(generate: { bob })
            }
            guard case .corruptIdentity(let path, _) = error else {
                Issue.record("expected corruptIdentity, got \(String(describing: error))")
                return
            }
            #expect(path == reopened.path)
            #expect(error?.description.contains("refusing to replace") == true)
            // Still corrupt, not replaced by bob's key.
            #expect(throws: StoreError.self) { try reopened.storedIdentity() }
        }
    }

    @Test func aKeyThatDoesNotMatchItsNodeIDIsCorrupt() throws {
        try withTemporaryDirectory { dir in
            let store = try HuddleStore(directory: dir)
            _ = try store.loadOrCreateIdentity(generate: { alice })
            try store.execute(sql: "UPDATE identity SET node_id = '\(bob.id.hex)'")
            let error = #expect(throws: StoreError.self) { try store.loadOrCreateIdentity(generate: { bob }) }
            #expect(error?.description.contains("not the recorded") == true)
        }
    }

    @Test func aFileThatIsNotAHuddleDatabaseIsRefused() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/huddle.sqlite"
            try Data("these are my notes, not a database\n".utf8).write(to: URL(fileURLWithPath: path))
            #expect(throws: StoreError.notHuddleDatabase(path: path)) { try HuddleStore(directory: dir) }
            #expect(throws: StoreError.notHuddleDatabase(path: path)) {
                try HuddleStore(directory: dir, readOnly: true)
            }
        }
        // Another program's SQLite file.
        try withTemporaryDirectory { dir in
            let store = try HuddleStore(directory: dir)
            try store.execute(sql: "PRAGMA application_id = 1")
            try store.close()
            #expect(throws: StoreError.notHuddleDatabase(path: store.path)) { try HuddleStore(directory: dir) }
        }
    }

    @Test func aDirectoryThatCannotBeCreatedIsAClearError() throws {
        try withTemporaryDirectory { tmp in
            let file = tmp + "/file"
            try Data().write(to: URL(fileURLWithPath: file))
            let error = #expect(throws: StoreError.self) { try HuddleStore(directory: file + "/data") }
            guard case .cannotCreateDirectory(let path, _) = error else {
                Issue.record("expected cannotCreateDirectory, got \(String(describing: error))")
                return
            }
            #expect(path == file + "/data" || path == file)
            #expect(error?.description.contains("cannot create the data directory") == true)
        }
    }

    // MARK: Events

    @Test func eventsRoundTripSignedAndDuplicatesAreIgnored() throws {
        try withTemporaryDirectory { dir in
            var superbowl = RoomLog(room: "superbowl")
            var worldcup = RoomLog(room: "worldcup")
            var inSuperbowl: [Event] = []
            inSuperbowl.append(superbowl.append(alice, .join(nick: "alice"), at: .epoch + .seconds(1)))
            inSuperbowl.append(superbowl.append(bob, .join(nick: "bob"), at: .epoch + .milliseconds(1_100)))
            inSuperbowl.append(superbowl.append(alice, .calibrationEvent(label: "kickoff"), at: .epoch + .milliseconds(1_200)))
            inSuperbowl.append(superbowl.append(alice, .mark(label: "kickoff"), at: .epoch + .milliseconds(1_300)))
            inSuperbowl.append(superbowl.append(bob, .delayNudge(milliseconds: -1_000), at: .epoch + .milliseconds(1_400)))
            inSuperbowl.append(superbowl.append(bob, .chat(text: "touchdown! 🏈"), at: .epoch + .milliseconds(1_500)))
            inSuperbowl.append(superbowl.append(alice, .leave, at: .epoch + .milliseconds(1_600)))
            let inWorldcup = [
                worldcup.append(alice, .join(nick: "alice"), at: .epoch + .seconds(2)),
                worldcup.append(alice, .chat(text: "goal"), at: .epoch + .milliseconds(2_100)),
            ]

            let store = try HuddleStore(directory: dir)
            #expect(try store.insert(inSuperbowl + inWorldcup) == 9)
            #expect(try store.insert(inSuperbowl + inWorldcup) == 0)
            #expect(try store.insert(Array(inSuperbowl.prefix(2))) == 0)
            #expect(try store.insert([Event]()) == 0)
            #expect(try store.eventCount(room: "superbowl") == 7)
            #expect(try store.eventCount(room: "worldcup") == 2)
            #expect(try store.eventCount(room: "nowhere") == 0)
            #expect(try store.storedRooms() == ["superbowl", "worldcup"])
            try store.close()

            let reopened = try reopenedStore(dir)
            let stored = try reopened.events(room: "superbowl")
            #expect(stored == byID(inSuperbowl))
            let verified = stored.filter(\.hasValidSignature)
            #expect(verified.count == inSuperbowl.count)
            #expect(try reopened.events(room: "worldcup") == byID(inWorldcup))
            #expect(try reopened.events(room: "nowhere").isEmpty)
        }
    }

    @Test func aDamagedEventRowIsAnErrorNamingTheRow() throws {
        try withTemporaryDirectory { dir in
            var log = RoomLog(room: "superbowl")
            let event = log.append(alice, .chat(text: "hi"), at: .epoch + .milliseconds(1))
            let store = try HuddleStore(directory: dir)
            try store.insert([event])
            try store.execute(sql: "UPDATE event SET bytes = x'00'")
            let error = #expect(throws: StoreError.self) { try store.events(room: "superbowl") }
            #expect(error?.description.contains("\(alice.id)#1") == true)
            #expect(error?.description.contains("superbowl") == true)
        }
    }

    /// `kill -9` leaves on disk exactly what was there at that instant: committed transactions
    /// partly in the database file, partly in its `-wal`. Copying the files while the store is
    /// open gives that state; a node restarted on the copy must have everything.
    @Test func everythingSurvivesACrashAndRestart() throws {
        try withTemporaryDirectory { tmp in
            let (dir, crashed) = (tmp + "/data", tmp + "/crashed")
            var log = RoomLog(room: "superbowl")
            let events = (1...5).map { log.append(alice, .chat(text: "line \($0)"), at: .epoch + .milliseconds($0)) }

            let store = try HuddleStore(directory: dir)
            let me = try store.loadOrCreateIdentity(generate: { alice })
            try store.setNick("alice")
            try store.setJoined("superbowl", true)
            try store.setJoined("worldcup", true)
            try store.setJoined("nba", true)
            try store.setJoined("superbowl", true)  // already in: keeps its place
            try store.setJoined("worldcup", false)
            try store.setJoined("worldcup", true)  // left and joined again: goes last
            try store.setJoined("never-joined", false)
            try store.setCurrentRoom("superbowl")
            try store.insert(events)
            #expect(try store.markShown(events.prefix(3).map(\.id), room: "superbowl", at: .epoch + .milliseconds(42)) == 3)
            #expect(try store.markShown([events[0].id], room: "superbowl", at: .epoch + .milliseconds(43)) == 0)
            #expect(try store.markShown([events[0].id], room: "worldcup", at: .epoch + .milliseconds(43)) == 0)

            #expect(FileManager.default.fileExists(atPath: store.path + "-wal"))
            try FileManager.default.copyItem(atPath: dir, toPath: crashed)
            try store.close()

            let restarted = try HuddleStore(directory: crashed)
            #expect(try restarted.loadOrCreateIdentity(generate: { bob }).id == me.id)
            #expect(try restarted.nick == "alice")
            #expect(try restarted.joinedRooms() == ["superbowl", "nba", "worldcup"])
            #expect(try restarted.currentRoom == "superbowl")
            #expect(try restarted.events(room: "superbowl") == events)
            #expect(try restarted.shownIDs(room: "superbowl") == Set(events.prefix(3).map(\.id)))
            #expect(try restarted.shownIDs(room: "worldcup").isEmpty)

            try restarted.setCurrentRoom(nil)
            try restarted.setNick(nil)
            #expect(try restarted.currentRoom == nil)
            #expect(try restarted.nick == nil)
        }
    }

    /// What a room drops for good (strangers' events it gave up on) gives the file its space
    /// back: round 3 left a data dir at 21.5 MB, 17 MB after a restart.
    @Test func deletedEventsGiveTheFileItsSpaceBack() throws {
        try withTemporaryDirectory { dir in
            var log = RoomLog(room: "superbowl")
            let filler = String(repeating: "x", count: 900)
            let events = (1...4_000).map { log.append(alice, .chat(text: "\($0) \(filler)"), at: .epoch + .milliseconds(Int64($0))) }
            func fileBytes() throws -> Int {
                try (FileManager.default.attributesOfItem(atPath: dir + "/huddle.sqlite")[.size] as? NSNumber)?.intValue ?? 0
            }
            var store = try HuddleStore(directory: dir)
            try store.apply([.events(events, own: false)])
            try store.close()
            let full = try fileBytes()
            #expect(full > 4_000_000)

            store = try reopenedStore(dir)
            try store.apply([.delete(events.dropFirst(10).map(\.id), room: "superbowl")])
            try store.close()
            let emptied = try fileBytes()
            #expect(emptied < full / 10, "\(full) bytes full, \(emptied) after the delete")
            #expect(try reopenedStore(dir).events(room: "superbowl") == Array(events.prefix(10)))
        }
    }

    @Test func oneWriterPerDataDirectory() throws {
        try withTemporaryDirectory { dir in
            let first = try HuddleStore(directory: dir)
            #expect(throws: StoreError.inUse(directory: dir)) { try HuddleStore(directory: dir) }
            #expect(try HuddleStore(directory: dir, readOnly: true).eventCount(room: "superbowl") == 0)
            try first.close()
            let second = try reopenedStore(dir)
            #expect(try permissions(dir + "/huddle.lock") == 0o600)
            #expect(throws: StoreError.inUse(directory: dir)) { try HuddleStore(directory: dir) }
            _ = second
        }
    }

    @Test func aRoomLogRebuiltFromTheStoreHasTheSameVectors() throws {
        try withTemporaryDirectory { dir in
            var log = RoomLog(room: "superbowl")
            var events: [Event] = []
            for n in 0..<30 {
                let author = n % 3 == 0 ? bob : alice
                events.append(log.append(author, .chat(text: "message \(n)"), at: .epoch + .milliseconds(n)))
            }
            // A node that holds alice's events but missed bob's #2 (his later ones wait in its log).
            var partial = RoomLog(room: "superbowl")
            let held = events.filter { !($0.origin == bob.id && $0.seq == 2) }
            for event in held { _ = partial.insert(event) }

            let store = try HuddleStore(directory: dir)
            try store.insert(held)
            try store.close()

            var rebuilt = RoomLog(room: "superbowl")
            for event in try reopenedStore(dir).events(room: "superbowl") { _ = rebuilt.insert(event) }
            #expect(rebuilt.vector == partial.vector)
            #expect(rebuilt.deliveredVector == partial.deliveredVector)
            #expect(rebuilt.count == partial.count)
            // The node's own next seq continues where it was.
            #expect(rebuilt.nextEventHeader(origin: alice.id).id == partial.nextEventHeader(origin: alice.id).id)
        }
    }

    // MARK: History

    @Test func aRoomRestoredFromTheStoreListsHistoryInGameTimeOrder() throws {
        try withTemporaryDirectory { dir in
            var log = RoomLog(room: "superbowl")
            // Kickoff: alice sees it at 2 000 on her clock, bob at 4 000 on his: bob is 2 s behind.
            var events = [
                log.append(alice, .join(nick: "alice"), at: .epoch + .seconds(1)),
                log.append(bob, .join(nick: "bob"), at: .epoch + .seconds(1)),
                log.append(alice, .mark(label: "kickoff"), at: .epoch + .seconds(2)),
                log.append(bob, .mark(label: "Kickoff "), at: .epoch + .seconds(4)),
            ]
            let a0 = log.append(alice, .chat(text: "a0"), at: .epoch + .milliseconds(2_500))  // game time 2 500
            let a1 = log.append(alice, .chat(text: "a1"), at: .epoch + .milliseconds(3_500))  // game time 3 500
            let b1 = log.append(bob, .chat(text: "b1"), at: .epoch + .seconds(5))  // game time 3 000
            events += [a1, b1, a0]

            let store = try HuddleStore(directory: dir)
            try store.insert(events)
            let stored = try store.events(room: "superbowl")
            var session = RoomSession(room: "superbowl", reader: alice.id)
            #expect(session.restore(stored, shown: Set(stored.map(\.id)), now: .epoch + .seconds(10)).isEmpty)
            #expect(session.history(last: 10).map(\.id) == [a0, b1, a1].map(\.id))
            #expect(session.history(last: 2).map(\.id) == [b1, a1].map(\.id))
            #expect(try store.events(room: "nowhere").isEmpty)
        }
    }

    // MARK: Read-only

    @Test func readOnlyReadsWhileAWriterHasTheStoreOpen() throws {
        try withTemporaryDirectory { dir in
            var log = RoomLog(room: "superbowl")
            let writer = try HuddleStore(directory: dir)
            let me = try writer.loadOrCreateIdentity(generate: { alice })
            try writer.insert([log.append(alice, .chat(text: "one"), at: .epoch + .milliseconds(1))])

            let reader = try HuddleStore(directory: dir, readOnly: true)
            #expect(reader.isReadOnly)
            #expect(try reader.storedIdentity()?.id == me.id)
            #expect(try reader.events(room: "superbowl").count == 1)

            try writer.insert([log.append(alice, .chat(text: "two"), at: .epoch + .milliseconds(2))])
            #expect(try reader.events(room: "superbowl").map(\.body) == [.chat(text: "one"), .chat(text: "two")])

            #expect(throws: StoreError.readOnly(path: reader.path)) {
                try reader.insert([log.append(alice, .chat(text: "three"), at: .epoch + .milliseconds(3))])
            }
            #expect(throws: StoreError.readOnly(path: reader.path)) { try reader.setNick("mallory") }
            #expect(try writer.eventCount(room: "superbowl") == 2)

            // And after the writer is gone.
            try writer.close()
            #expect(try HuddleStore(directory: dir, readOnly: true).eventCount(room: "superbowl") == 2)
        }
    }

    @Test func readOnlyWithoutADatabaseIsAClearErrorAndCreatesNothing() throws {
        try withTemporaryDirectory { tmp in
            let missing = tmp + "/missing"
            #expect(throws: StoreError.noData(directory: missing)) {
                try HuddleStore(directory: missing, readOnly: true)
            }
            #expect(!FileManager.default.fileExists(atPath: missing))
            #expect(StoreError.noData(directory: missing).description.contains("no Huddle data in \(missing)"))

            #expect(throws: StoreError.noData(directory: tmp)) { try HuddleStore(directory: tmp, readOnly: true) }
            let contents = try FileManager.default.contentsOfDirectory(atPath: tmp)
            #expect(contents.isEmpty)
        }
    }
}
