/// Traffic counters a node reports in `huddle status`.
struct NodeCounters: Sendable {
    var packetsIn = 0
    var packetsOut = 0
    /// Datagrams and frames dropped (malformed, oversized or refused) and events dropped from
    /// them because their signatures do not verify, one each.
    var rejected = 0
    /// Peers speaking a newer wire protocol (also counted in `rejected`).
    var newerProtocol = 0
    var eventsReceived = 0
    var eventsStored = 0
}
