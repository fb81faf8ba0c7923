/// What a room log sends when replication asks: the answers to a digest and to a pull.
extension RoomLog {
    /// The push that answers a digest: the events a peer whose vector is `have` misses, as many as
    /// ``ReplicationConfig/maxPushEvents`` and ``ReplicationConfig/maxPushBytes`` allow.
    public func push(missingFor have: VersionVector, config: ReplicationConfig) -> [Event] {
        batch(missingFor: have, maxEvents: config.maxPushEvents, maxBytes: config.maxPushBytes).events
    }

    /// The answer to a pull: up to the request's limit (and ``WireLimits/maxEventsPerBatch``) of
    /// the events the requester misses, within half a TCP frame, and whether more remain.
    ///
    /// Events whose context names an equivocator's dropped seqs come after the proof (both
    /// versions of its event, see ``Equivocation``): without it, the requester would wait for
    /// events nobody serves.
    public func response(to request: SyncRequest) -> SyncResponse {
        let maxEvents = min(Int(request.limit), WireLimits.maxEventsPerBatch - 2 * faults.count)
        let (events, more) = batch(missingFor: request.have, maxEvents: maxEvents, maxBytes: WireLimits.maxFrameBytes / 2)
        let proofs = evidence(for: events).flatMap { [$0.first, $0.second] }
        return SyncResponse(room: room, events: proofs + events, more: more)
    }
}
