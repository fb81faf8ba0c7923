/// What a room log sends when replication asks: the answers to a digest and to a pull.
extension RoomLog {
    /// The push that answers a digest: the events a peer whose vector is `have` misses, as many as
    /// ``ReplicationConfig/maxPushEvents`` and ``ReplicationConfig/maxPushBytes`` allow.
    public func push(missingFor have: VersionVector, config: ReplicationConfig) -> [Event] {
        batch(missingFor: have, maxEvents: config.maxPushEvents, maxBytes: config.maxPushBytes).events
    }

    /// The answer to a pull: up to the request's limit (and ``WireLimits/maxEventsPerBatch``) of
    /// the events the requester misses, within half a TCP frame, and whether more remain.
    public func response(to request: SyncRequest) -> SyncResponse {
        let (events, more) = batch(
            missingFor: request.have, maxEvents: min(Int(request.limit), WireLimits.maxEventsPerBatch),
            maxBytes: WireLimits.maxFrameBytes / 2)
        return SyncResponse(room: room, events: events, more: more)
    }
}
