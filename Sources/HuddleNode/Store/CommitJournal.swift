#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import HuddleCore

/// What must survive a `kill -9` before a line leaves or is shown, written with one `write(2)`
/// instead of waiting for SQLite's commit: the store's journal of landed writes.
///
/// A line's own event must be kept before it is sent (so a crash never makes the node sign its
/// seq again), and the record that a message was shown before it is shown (so a restart never
/// shows it twice). Both used to wait for the store's commit: a SQLite transaction on the
/// writer's thread and the hops there and back, ~0.4 ms of each line's way on this machine, on
/// the writer's side and on every reader's. An append to this file is in the kernel's page cache
/// when `write(2)` returns, which a killed process cannot take back, in a few µs, on the actor.
/// The same writes still go to the store (``StoreWriter``), which commits them soon after and
/// notes the last entry it holds (``HuddleStore/journalThrough``); the next run puts back into
/// the store what it lacks of the journal (``replay(into:)``) before anything reads it.
///
/// Only events and shown records land here (``canHold(_:)``); a turn with anything else (a
/// lease, which must be synced; a room joined) waits for its commit as before. A power cut may
/// take the journal's last entries like the store's unsynced commits: the seq lease answers for
/// those (docs/PROTOCOL.md, "After a power cut").
///
/// The file is `journal` in the data directory, mode 0600. Each entry:
///
///     length:u32  number:u64  check:u64  payload<length>
///     payload = count:u16 (length:u32 event<length>)*  count:u16 shown*
///     shown   = room:str16 at:i64 count:u32 (origin:32 seq:u64)*
///
/// little-endian, `check` the FNV-1a hash of `number` and the payload, numbers rising by one: a
/// torn or stale entry ends the replay.
final class CommitJournal {
    /// The file's path.
    let path: String
    private let descriptor: Int32
    /// The number the next entry gets.
    private(set) var nextNumber: UInt64
    /// Bytes in the file now.
    private(set) var size = 0

    /// The file is emptied once it holds more than this and the store holds all of it.
    static let emptyAfter = 64 * 1024

    /// Opens (or creates) the journal in `directory`, after putting back into `store` every
    /// entry it lacks (``replay(into:)``); the file is then empty.
    init(directory: String, store: HuddleStore) throws {
        path = directory + "/journal"
        descriptor = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw StoreError.notWritable(path: path, reason: StoreFiles.describe(errno)) }
        nextNumber = 1
        // (If the replay throws, `self` is whole already: deinit closes the file.)
        nextNumber = try replay(into: store) + 1
    }

    deinit { close(descriptor) }

    /// Whether every write in `writes` is of a kind the journal holds, and they are few: the
    /// journal is for a line's way (a typed line, a push of a few events). A piped burst's run
    /// or a pull's batch goes the store's way only, not written twice.
    static func canHold(_ writes: [StoreWrite]) -> Bool {
        var events = 0
        for write in writes {
            switch write {
            case .events(let some, _): events += some.count
            case .shown(let ids, _, _): events += ids.count
            default: return false
            }
        }
        return events <= maximumEvents
    }

    /// The most events (and shown records) one entry holds.
    static let maximumEvents = 64

    /// Appends `writes` (``canHold(_:)``) as the next entry, with one `write(2)`: once this
    /// returns, a `kill -9` cannot lose them. Returns the entry's number.
    func append(_ writes: [StoreWrite]) throws(StoreError) -> UInt64 {
        let entry = Self.entry(writes, number: nextNumber)
        var written = 0
        while written < entry.count {
            let result = entry.withUnsafeBytes { buffer in
                write(descriptor, buffer.baseAddress! + written, buffer.count - written)
            }
            if result < 0 {
                if errno == EINTR { continue }
                let reason = StoreFiles.describe(errno)
                // A part written would stay behind as a torn entry, and the replay would stop
                // there, before any later one: cut back to where the entry began.
                if written > 0 { _ = ftruncate(descriptor, off_t(size)) }
                throw .notWritable(path: path, reason: reason)
            }
            written += result
        }
        size += entry.count
        defer { nextNumber += 1 }
        return nextNumber
    }

    /// Empties the file: only once the store holds every entry.
    func empty() {
        if ftruncate(descriptor, 0) == 0 { size = 0 }
    }

    /// Puts back into `store`, in one transaction, the entries it does not hold yet (numbered
    /// past ``HuddleStore/journalThrough()``), then empties the file. Returns the highest
    /// number the store now holds.
    private func replay(into store: HuddleStore) throws -> UInt64 {
        let held = try store.journalThrough()
        let bytes = FileManager.default.contents(atPath: path).map(Array.init) ?? []
        let entries = Self.entries(in: bytes).filter { $0.number > held }
        var through = held
        if let last = entries.last {
            try store.apply(entries.flatMap(\.writes), journalThrough: last.number)
            through = last.number
        }
        if ftruncate(descriptor, 0) != 0 { throw StoreError.notWritable(path: path, reason: StoreFiles.describe(errno)) }
        return through
    }

    // MARK: Entries

    /// One entry read back.
    struct Entry: Equatable {
        var number: UInt64
        var writes: [StoreWrite]
    }

    static let headerByteCount = 4 + 8 + 8

    /// The bytes of entry `number` holding `writes`.
    static func entry(_ writes: [StoreWrite], number: UInt64) -> [UInt8] {
        var payload: [UInt8] = []
        let events = writes.flatMap { write -> [Event] in if case .events(let events, _) = write { events } else { [] } }
        let shown = writes.compactMap { write -> ([EventID], String, WallTime)? in
            if case .shown(let ids, let room, let at) = write { (ids, room, at) } else { nil }
        }
        payload.append(little: UInt16(events.count))
        for event in events {
            let bytes = event.encoded()
            payload.append(little: UInt32(bytes.count))
            payload += bytes
        }
        payload.append(little: UInt16(shown.count))
        for (ids, room, at) in shown {
            let name = Array(room.utf8)
            payload.append(little: UInt16(name.count))
            payload += name
            payload.append(little: UInt64(bitPattern: at.millisecondsSinceEpoch))
            payload.append(little: UInt32(ids.count))
            for id in ids {
                payload += id.origin.bytes
                payload.append(little: id.seq)
            }
        }
        var entry: [UInt8] = []
        entry.reserveCapacity(headerByteCount + payload.count)
        entry.append(little: UInt32(payload.count))
        entry.append(little: number)
        entry.append(little: check(number: number, payload[...]))
        return entry + payload
    }

    /// The entries at the start of `bytes` that are whole, checked and numbered one past the
    /// one before; the first that is not ends them (a write a crash tore, or what a power cut
    /// left of the file).
    static func entries(in bytes: [UInt8]) -> [Entry] {
        var entries: [Entry] = []
        var reader = JournalReader(bytes[...])
        while let length = reader.little(UInt32.self), let number = reader.little(UInt64.self),
            let check = reader.little(UInt64.self), let payload = reader.bytes(Int(length)),
            check == Self.check(number: number, payload),
            entries.last.map({ number == $0.number + 1 }) ?? true,
            let writes = writes(in: payload)
        {
            entries.append(Entry(number: number, writes: writes))
        }
        return entries
    }

    private static func writes(in payload: ArraySlice<UInt8>) -> [StoreWrite]? {
        var reader = JournalReader(payload)
        guard let eventCount = reader.little(UInt16.self) else { return nil }
        var byRoom: [(room: String, events: [Event])] = []
        for _ in 0..<eventCount {
            guard let length = reader.little(UInt32.self), let bytes = reader.bytes(Int(length)),
                let event = try? Event(decoding: bytes)
            else { return nil }
            if let last = byRoom.indices.last, byRoom[last].room == event.room {
                byRoom[last].events.append(event)
            } else {
                byRoom.append((event.room, [event]))
            }
        }
        var writes = byRoom.map { StoreWrite.events($0.events, own: false) }
        guard let shownCount = reader.little(UInt16.self) else { return nil }
        for _ in 0..<shownCount {
            guard let nameLength = reader.little(UInt16.self), let name = reader.bytes(Int(nameLength)),
                let room = String(validating: name, as: UTF8.self), let at = reader.little(UInt64.self),
                let idCount = reader.little(UInt32.self)
            else { return nil }
            var ids: [EventID] = []
            for _ in 0..<idCount {
                guard let origin = reader.bytes(32).flatMap({ NodeID(bytes: $0) }), let seq = reader.little(UInt64.self)
                else { return nil }
                ids.append(EventID(origin: origin, seq: seq))
            }
            writes.append(.shown(ids, room: room, at: WallTime.milliseconds(sinceEpoch: Int64(bitPattern: at))))
        }
        return reader.isAtEnd ? writes : nil
    }

    /// FNV-1a over `number`'s bytes and `payload`: enough to tell a torn or stale entry, which is
    /// all it is for (the file is the owner's, in a 0700 directory).
    static func check(number: UInt64, _ payload: ArraySlice<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        for shift in stride(from: 0, to: 64, by: 8) { mix(UInt8(truncatingIfNeeded: number >> UInt64(shift))) }
        for byte in payload { mix(byte) }
        return hash
    }
}

/// Reads a journal entry's fields, little-endian; `nil` past the end.
private struct JournalReader {
    private let bytes: ArraySlice<UInt8>
    private var index: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        index = bytes.startIndex
    }

    var isAtEnd: Bool { index == bytes.endIndex }

    mutating func bytes(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, bytes.endIndex - index >= count else { return nil }
        defer { index += count }
        return bytes[index..<index + count]
    }

    mutating func little<T: FixedWidthInteger>(_: T.Type) -> T? {
        guard let field = bytes(MemoryLayout<T>.size) else { return nil }
        return field.reversed().reduce(T.zero) { $0 << 8 | T($1) }
    }
}

extension [UInt8] {
    fileprivate mutating func append<T: FixedWidthInteger>(little value: T) {
        for shift in stride(from: 0, to: T.bitWidth, by: 8) { append(UInt8(truncatingIfNeeded: value >> shift)) }
    }
}
