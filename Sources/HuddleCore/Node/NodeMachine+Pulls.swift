/// A pull, decided here for every driver (the node's TCP client, the simulator, the tests' LAN):
/// when it runs (``pullsAtOnce``, one per peer), what its first request asks for, whether a batch
/// that came back calls for another, and when it ends. The driver runs each
/// ``NodeEffect/pull(_:)`` it is given at once, carries the requests and batches, checks
/// signatures (on every core, in the node), and says when the pull is over (``pullFinished(_:)``,
/// also when it failed).
///
/// ```swift
/// var asked = machine.firstSyncRequest(for: pull)           // the room's vector, lowered for a recheck
/// while let next = machine.pulled(verified, for: pull, asked: asked, more: response.more, now: now) {
///     asked = next                                          // send it; verify the next batch
/// }
/// machine.pullFinished(pull)
/// ```
extension NodeMachine {
    /// Most events a pull asks for in one batch.
    public static let pullBatchLimit: UInt16 = 1024
    /// Pulls running at once. One: a pull's batch is up to a thousand signatures to check, on
    /// every core, and the room's next pull asks for less once the last one is in.
    public static let pullsAtOnce = 1

    /// Runs `pull` now if a slot is free and no pull from that peer runs, or queues it (once).
    mutating func schedulePull(_ pull: PullRequest) {
        guard pulls.running.count < Self.pullsAtOnce, !pulls.running.contains(where: { $0.address == pull.address }) else {
            if !pulls.waiting.contains(pull) { pulls.waiting.append(pull) }
            return
        }
        pulls.running.append(pull)
        emit(.pull(pull))
    }

    /// The request a pull starts with: this node's version vector of the room, lowered for a
    /// recheck so the peer sends `recheck`'s events from seq `from` on again, to compare them.
    public func firstSyncRequest(for pull: PullRequest) -> SyncRequest {
        var have = vector(of: pull.room)
        if let origin = pull.recheck { have[origin] = min(have[origin], pull.from - 1) }
        return SyncRequest(from: identity.id, room: pull.room, have: have, limit: Self.pullBatchLimit)
    }

    /// A batch of `pull` came back for the request `asked`, its events verified by the caller (a
    /// pull brings up to a thousand at once, which the node checks on every core): takes them,
    /// and returns the next request, or `nil` when the pull is done — the peer has no more, the
    /// batch brought nothing new (so a peer cannot keep a node asking forever), or this node is
    /// not in the room any longer.
    public mutating func pulled(
        _ verified: [Event], for pull: PullRequest, asked: SyncRequest, more: Bool, now: NodeTime
    ) -> SyncRequest? {
        // A peer that sends back this node's own events holds them.
        if let seq = verified.filter({ $0.origin == identity.id }).map(\.seq).max() {
            noteHeld(room: pull.room, seq: seq, by: pull.peer)
        }
        guard let after = ingest(verified, room: pull.room, from: nil, now: now) else { return nil }
        guard more, !verified.isEmpty, after != asked.have, after.dominates(asked.have) else { return nil }
        return SyncRequest(from: identity.id, room: pull.room, have: after, limit: Self.pullBatchLimit)
    }

    /// A pull ended (all of it, or failed): the room may be pulled from that peer again.
    public mutating func pullFinished(_ pull: PullRequest) {
        guard let index = pulls.running.firstIndex(of: pull) else { return }
        pulls.running.remove(at: index)
        if !pull.confirm { replication.pullFinished(room: pull.room, peer: pull.peer) }
        let waiting = pulls.waiting
        pulls.waiting = []
        for next in waiting { schedulePull(next) }
    }
}

/// The pulls a node runs and those waiting for a slot (``NodeMachine/pullsAtOnce``).
struct PullSlots {
    var running: [PullRequest] = []
    var waiting: [PullRequest] = []
}
