/// Timing and bounds of ``Membership``. All times are in microseconds of the node's monotonic
/// clock.
///
/// With the defaults a node that dies is noticed by the next node to probe it (each node probes
/// one peer a second, so about one probe a second reaches any node), suspect a second later, and
/// gone 4 s after that: reported gone everywhere within about 7 s, under the 10 s the design asks.
///
/// ```swift
/// var config = MembershipConfig()
/// config.probeInterval = 200_000   // a protocol period of 200 ms, like Serf's LAN profile
/// ```
public struct MembershipConfig: Hashable, Sendable {
    /// The protocol period (default 1 s): each period one peer, the next in turn, is probed; it
    /// is suspect if none of the period's probes to it is answered.
    public var probeInterval: Int64
    /// How many probes a period sends its peer while none is answered, evenly spaced over the
    /// period (default 4). At 20 % datagram loss a probe and its ack both arrive 64 % of the time,
    /// so one of four gets through 98 % of the time.
    public var probeAttempts: Int
    /// How long a peer stays suspect before it is gone, unless it refutes by raising its
    /// incarnation (default 4 s).
    public var suspicionTimeout: Int64
    /// How often a gone peer is still probed, so one that comes back is noticed (default 5 s).
    public var goneProbeInterval: Int64
    /// How long a change of a peer's state is gossiped before the rest (default 10 s): it goes
    /// into every probe and ack first, so it reaches everyone in a few periods.
    public var freshGossipFor: Int64
    /// Most peers listed in one probe or ack (default 32); fewer when they would not fit in
    /// ``WireLimits/maxDatagramBytes``. Successive messages rotate through the known peers.
    public var maxGossipPeers: Int
    /// Most peers known at once (default 256). A new peer beyond it replaces the gone peer seen
    /// longest ago, or is ignored when no peer is gone.
    public var maxPeers: Int

    /// The defaults, or the values given.
    public init(
        probeInterval: Int64 = 1_000_000, probeAttempts: Int = 4, suspicionTimeout: Int64 = 4_000_000,
        goneProbeInterval: Int64 = 5_000_000, freshGossipFor: Int64 = 10_000_000, maxGossipPeers: Int = 32,
        maxPeers: Int = 256
    ) {
        precondition(probeInterval > 0 && probeAttempts > 0, "a period needs a length and at least one probe")
        self.probeInterval = probeInterval
        self.probeAttempts = probeAttempts
        self.suspicionTimeout = suspicionTimeout
        self.goneProbeInterval = goneProbeInterval
        self.freshGossipFor = freshGossipFor
        self.maxGossipPeers = maxGossipPeers
        self.maxPeers = maxPeers
    }

    /// How long an unanswered probe is remembered, so a late ack still counts as contact.
    var probeMemory: Int64 { probeInterval.clampedAdding(suspicionTimeout) }
}
