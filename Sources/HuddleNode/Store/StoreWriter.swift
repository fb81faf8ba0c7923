import Foundation
import HuddleCore
import Logging
import Synchronization

/// Writes a node's store off the node's actor, on a queue of its own, committing everything
/// that queued up meanwhile in one transaction (group commit): a slow disk delays the disk, not
/// the chat.
///
/// The rules it keeps (``Node/carryOut(_:)`` relies on them):
/// - **Order.** Writes are committed in the order they were handed over (``hand(_:)``,
///   ``enqueue(_:)``), which the node does on its actor, in the order of its turns.
/// - **This node's own events** are committed before ``committed(_:)`` returns, and the node sends
///   or shows nothing of such an input before then: a `kill -9` can never make it sign another
///   event with a seq a peer already holds, and nothing is said to the reader as sent that a
///   crash of the process can lose. A lease of seqs among the writes (``SeqLease``) is synced
///   (`synchronous = FULL`) before it returns: that is what a power cut leaves.
/// - **A message is recorded as shown before it is shown** (``committed(_:)`` again, without an
///   fsync: it survives `kill -9`), so a restart never shows it twice.
/// - **Or both are in the journal** (``CommitJournal``), which a `kill -9` cannot lose either:
///   then the node hands them over with the entry's number (``hand(_:journaled:)``) and does not
///   wait; the commit notes the number in the store, so the next run knows what it holds. The
///   node journals only when everything handed over outside it is committed
///   (``mayJournal(backlog:)``): a shown record must not land before the peer's event it marks.
/// - **Everything else** (peers' events still held back, rooms, nicks) is handed over with
///   ``enqueue(_:)`` and not waited for. It is committed within one commit's time; a clean stop
///   (``flush()``) commits all of it. A `kill -9` in that window can lose the last commit, and
///   what it held comes back from peers by anti-entropy.
final class StoreWriter: Sendable {
    /// The store it commits to; reads go to it directly.
    let store: HuddleStore
    private let queue = DispatchQueue(label: "huddle.store.writer")
    private let commitDelay: Duration?
    private let logger: Logger
    /// Events the store took that it did not hold yet, and commits so far.
    private let tally = Mutex((events: 0, commits: 0))

    private struct Pending {
        var writes: [StoreWrite] = []
        /// The journal's last entry among `writes`.
        var journalThrough: UInt64?
        /// Hand-overs so far, and how many of them are committed: a wait is for its number.
        var handed: UInt64 = 0
        var committed: UInt64 = 0
        /// The last hand-over whose writes are not in the journal.
        var lastUnjournaled: UInt64 = 0
        /// Whether a commit failed: the journal then keeps everything until the next run.
        var failed = false
        var waiters: [(through: UInt64, waiter: CheckedContinuation<Void, Never>)] = []
        var scheduled = false
    }
    private let pending = Mutex(Pending())

    /// `commitDelay` is added to every commit: a slow disk, for the benchmark that checks chat
    /// does not wait for one (`HUDDLE_STORE_COMMIT_DELAY_MS`).
    init(store: HuddleStore, logger: Logger, commitDelay: Duration? = nil) {
        self.store = store
        self.logger = logger
        self.commitDelay = commitDelay
    }

    /// Events the store took that it did not hold, so far (``NodeCounters/eventsStored``).
    var eventsStored: Int { tally.withLock { $0.events } }

    /// Transactions committed so far: fewer than the batches handed over when they queue up.
    var commits: Int { tally.withLock { $0.commits } }

    /// Queues writes to commit soon; returns at once.
    func enqueue(_ writes: [StoreWrite]) {
        guard !writes.isEmpty else { return }
        _ = hand(writes)
    }

    /// Queues writes and returns once they, and everything queued before them, are committed.
    func commit(_ writes: [StoreWrite]) async {
        await committed(hand(writes))
    }

    /// Queues writes now, after everything handed over before (so the caller's order is the
    /// commit's, whatever runs first afterwards); ``committed(_:)`` waits for them by the number
    /// returned. `journaled`: the writes are the journal's entry of that number, which a
    /// `kill -9` already cannot lose (``CommitJournal``).
    func hand(_ writes: [StoreWrite], journaled: UInt64? = nil) -> Handed {
        let (number, schedule) = pending.withLock { pending in
            pending.writes += writes
            pending.handed += 1
            if let journaled { pending.journalThrough = journaled } else { pending.lastUnjournaled = pending.handed }
            defer { pending.scheduled = true }
            return (pending.handed, !pending.scheduled)
        }
        if schedule { queue.async { self.drain() } }
        return Handed(number: number)
    }

    /// Writes handed over with ``hand(_:journaled:)``, by their place in the order.
    struct Handed: Sendable {
        fileprivate let number: UInt64
    }

    /// Whether the next writes may go to the journal instead of waiting for their commit:
    /// everything handed over outside the journal is committed (so nothing the journal's entry
    /// relies on, such as the event a shown record marks, is in neither), and fewer than
    /// `backlog` hand-overs wait (a burst that outruns the disk waits for it, as before).
    func mayJournal(backlog: Int) -> Bool {
        pending.withLock { $0.committed >= $0.lastUnjournaled && $0.handed - $0.committed < backlog }
    }

    /// Whether `handed`, and everything before it, is committed without a failure: the journal's
    /// entries up to it are in the store, and the file may be emptied.
    func holds(_ handed: Handed) -> Bool {
        pending.withLock { !$0.failed && $0.committed >= handed.number }
    }

    /// Returns once `handed`, and everything handed over before it, is committed.
    func committed(_ handed: Handed) async {
        await withCheckedContinuation { waiter in
            let now = pending.withLock { pending in
                guard pending.committed < handed.number else { return true }
                pending.waiters.append((handed.number, waiter))
                return false
            }
            if now { waiter.resume() }
        }
    }

    /// Commits everything queued, before returning: for a clean stop.
    func flush() {
        queue.sync { self.drain() }
    }

    /// Commits everything queued and syncs it with the mark of a clean stop, before returning:
    /// the next run knows nothing it committed can be lost (``HuddleStore/endRunCleanly()``).
    func finish() {
        queue.sync {
            self.drain()
            do { try store.endRunCleanly() } catch {
                logger.error("could not mark the clean stop in the store", metadata: ["huddle.error": "\(error)"])
            }
        }
    }

    /// Commits what is queued, again and again until nothing is: what arrives during a commit
    /// goes in the next one, together.
    private func drain() {
        while true {
            let (writes, journalThrough, through) = pending.withLock { pending in
                let taken = (pending.writes, pending.journalThrough)
                pending.writes = []
                pending.journalThrough = nil
                if taken.0.isEmpty { pending.scheduled = false }
                return (taken.0, taken.1, pending.handed)
            }
            guard !writes.isEmpty else {
                resumeWaiters(through: through)
                return
            }
            // A slow disk, on demand: the commit ends this much later.
            if let commitDelay { Thread.sleep(for: commitDelay) }
            do {
                let report = try store.apply(writes, journalThrough: journalThrough)
                tally.withLock {
                    $0.events += report.eventsStored
                    $0.commits += 1
                }
                for proof in report.newFaults {
                    // The reader is told by the room's output; this is for a log at --log-level info.
                    logger.info(
                        "peer equivocated: two signed versions of one event",
                        metadata: ["huddle.room": "\(proof.room)", "huddle.event": "\(proof.first.id)"])
                }
            } catch {
                pending.withLock { $0.failed = true }
                logger.error("could not write to the store", metadata: ["huddle.error": "\(error)"])
            }
            resumeWaiters(through: through)
        }
    }

    /// The hand-overs up to `through` are committed (or failed, and logged): their waits end.
    private func resumeWaiters(through: UInt64) {
        let due = pending.withLock { pending in
            pending.committed = max(pending.committed, through)
            let due = pending.waiters.filter { $0.through <= through }
            pending.waiters.removeAll { $0.through <= through }
            return due
        }
        for (_, waiter) in due { waiter.resume() }
    }
}

extension Thread {
    /// Blocks the calling thread for `duration`.
    fileprivate static func sleep(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
    }
}
