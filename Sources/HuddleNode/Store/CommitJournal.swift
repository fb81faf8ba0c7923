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
/// Only events and shown records land here (``JournalEntry/canHold(_:)``); a turn with anything
/// else (a lease, which must be synced; a room joined) waits for its commit as before. A power cut may
/// take the journal's last entries like the store's unsynced commits: the seq lease answers for
/// those (docs/PROTOCOL.md, "After a power cut").
///
/// The file is `journal` in the data directory, mode 0600, a run of entries
/// (``HuddleCore/JournalEntry``, the format).
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

    /// Appends `writes` (``JournalEntry/canHold(_:)``) as the next entry, with one `write(2)`:
    /// once this returns, a `kill -9` cannot lose them. Returns the entry's number.
    func append(_ writes: [StoreWrite]) throws(StoreError) -> UInt64 {
        let entry = JournalEntry.bytes(writes, number: nextNumber)
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
        let entries = JournalEntry.entries(in: bytes).filter { $0.number > held }
        var through = held
        if let last = entries.last {
            try store.apply(entries.flatMap(\.writes), journalThrough: last.number)
            through = last.number
        }
        if ftruncate(descriptor, 0) != 0 { throw StoreError.notWritable(path: path, reason: StoreFiles.describe(errno)) }
        return through
    }
}
