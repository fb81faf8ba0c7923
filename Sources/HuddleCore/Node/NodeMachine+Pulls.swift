/// A pull, decided here for every driver (the node's TCP client, the simulator, the tests' LAN):
/// when it runs (``pullsAtOnce``, one per peer), what each request asks for (the room's vector,
/// lowered for a recheck), which events of a batch are worth a signature check, whether a batch
/// calls for another, and when the pull ends. The driver only carries bytes and checks
/// signatures, on every core in the node:
///
/// ```
/// effect  .pull(pull, first: request)          open a connection, send the request
/// input   .pullBatch(pull, events:, more:)     what came back
/// effect  .checkSignatures(pull, events, more:) the events worth checking
/// input   .pullChecked(pull, valid:, invalid:, more:)
/// effect  .pullNext(pull, request) or .pullDone(pull)
/// input   .pullFailed(pull)                    the connection broke (any time)
/// ```
extension NodeMachine {
    /// Most events a pull asks for in one batch.
    public static let pullBatchLimit: UInt16 = 1024
    /// Pulls running at once. One: a pull's batch is up to a thousand signatures to check, on
    /// every core, and the room's next pull asks for less once the last one is in.
    public static let pullsAtOnce = 1

    /// Runs `pull` now if a slot is free and no pull from that peer runs, or queues it (once).
    mutating func schedulePull(_ pull: PullRequest) {
        guard pulls.running.count < Self.pullsAtOnce, !pulls.running.keys.contains(where: { $0.address == pull.address })
        else {
            if !pulls.waiting.contains(pull) { pulls.waiting.append(pull) }
            return
        }
        var pull = pull
        pulls.started += 1
        pull.serial = pulls.started
        let first = firstSyncRequest(for: pull)
        pulls.running[pull] = first
        emit(.pull(pull, first: first))
    }

    /// The request a pull starts with: this node's version vector of the room, lowered for a
    /// recheck so the peer sends `recheck`'s events from seq `from` on again, to compare them.
    func firstSyncRequest(for pull: PullRequest) -> SyncRequest {
        var have = vector(of: pull.room)
        if let origin = pull.recheck { have[origin] = min(have[origin], pull.from - 1) }
        return SyncRequest(from: identity.id, room: pull.room, have: have, limit: Self.pullBatchLimit)
    }

    /// A batch of `pull` came back: its events worth a signature check go to the driver.
    mutating func pullBatch(_ events: [Event], of pull: PullRequest, more: Bool, now: NodeTime) {
        // A batch always gets an answer, so a driver waiting for one is never left hanging.
        guard pulls.running[pull] != nil else { return emit(.pullDone(pull)) }
        // A peer that sends back this node's own events holds them: copies byte for byte of what
        // it signed (so no proof to check), which the screen below drops as copies.
        if let log = rooms[pull.room]?.log,
            let seq = events.filter({ $0.origin == identity.id && log.holds($0) }).map(\.seq).max()
        {
            noteHeld(room: pull.room, seq: seq, by: pull.peer)
        }
        emit(.checkSignatures(pull, screen(events, now: now), more: more))
    }

    /// A batch of `pull`, its signatures checked (`invalid` did not verify): takes the events,
    /// then asks for the next batch, or ends the pull — the peer has no more, the batch brought
    /// nothing new (so a peer cannot keep a node asking forever), or this node is not in the room
    /// any longer.
    mutating func pullChecked(_ verified: [Event], invalid: Int, of pull: PullRequest, more: Bool, now: NodeTime) {
        guard let asked = pulls.running[pull] else { return emit(.pullDone(pull)) }
        countDropped(.badSignature, count: invalid)
        guard let next = pulled(verified, for: pull, asked: asked, more: more, now: now) else {
            emit(.pullDone(pull))
            return pullFinished(pull)
        }
        pulls.running[pull] = next
        emit(.pullNext(pull, next))
    }

    /// Takes a batch of `pull` that answered `asked`; returns the request for the next batch, if
    /// one is called for.
    mutating func pulled(_ verified: [Event], for pull: PullRequest, asked: SyncRequest, more: Bool, now: NodeTime) -> SyncRequest? {
        // A peer that sends back own events this node had lost holds them.
        if let seq = verified.filter({ $0.origin == identity.id }).map(\.seq).max() {
            noteHeld(room: pull.room, seq: seq, by: pull.peer)
        }
        guard let after = ingest(verified, room: pull.room, from: nil, now: now) else { return nil }
        guard more, !verified.isEmpty, after != asked.have, after.dominates(asked.have) else { return nil }
        return SyncRequest(from: identity.id, room: pull.room, have: after, limit: Self.pullBatchLimit)
    }

    /// A pull ended (all of it, or failed): the room may be pulled from that peer again, and a
    /// waiting pull may start.
    mutating func pullFinished(_ pull: PullRequest) {
        guard pulls.running.removeValue(forKey: pull) != nil else { return }
        if !pull.confirm { replication.pullFinished(room: pull.room, peer: pull.peer) }
        let waiting = pulls.waiting
        pulls.waiting = []
        for next in waiting { schedulePull(next) }
    }
}

/// The pulls a node runs, each with the request its next batch answers, and those waiting for a
/// slot (``NodeMachine/pullsAtOnce``).
struct PullSlots {
    var running: [PullRequest: SyncRequest] = [:]
    /// Pulls started so far (each one's ``PullRequest/serial``).
    var started: UInt64 = 0
    var waiting: [PullRequest] = []
}
