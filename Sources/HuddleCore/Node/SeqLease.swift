/// The seqs a node may use in a room before its disk must be synced again.
///
/// A node must never sign two events with one seq: peers would take it for equivocation. So an
/// event it makes must be on disk before anyone sees it. *Committed* is enough against a
/// `kill -9` (SQLite's write-ahead log survives the process), and costs no `fsync`; against a
/// power cut only a *synced* write is. The lease keeps the `fsync` off the send path: the node
/// syncs "I may use seqs up to N" once per ``block`` events, and sends each event once it is
/// committed. After a power cut it cannot know which leased seqs it used (some may have reached a
/// peer), so it starts past the lease, and its first event voids the stretch
/// (``EventBody/voided(from:)``, ``NodeMachine/voidWhatWasLost(in:now:)``).
public struct SeqLease: Sendable, Equatable {
    /// Seqs leased per sync. A void covers at most this many, well within what a log accepts
    /// past a gap (``RoomLog/maximumGap``).
    public static let block: UInt64 = 512

    /// The highest seq leased.
    public internal(set) var through: UInt64 = 0
    /// Whether the last run may have lost events it made here (``NodeRestore/lostUnsynced``).
    var mayHaveLost = false

    /// The lease to sync with the event at `seq`, when fewer than half a block is left: renewed
    /// ahead of need, so that only one event in half a block waits for an `fsync`.
    mutating func extend(for seq: UInt64) -> UInt64? {
        guard seq + Self.block / 2 > through else { return nil }
        through = seq + Self.block
        return through
    }
}
