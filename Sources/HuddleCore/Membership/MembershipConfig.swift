/// Timing and bounds of ``Membership``. All times are in microseconds of the node's monotonic
/// clock.
///
/// With the defaults a peer that stops answering is suspect after 3 s and gone after 8 s, so a
/// killed node is reported gone within 10 s even if the tick that notices it comes a probe
/// interval late.
///
/// ```swift
/// var config = MembershipConfig()
/// config.probeInterval = 200_000   // probe every 200 ms, like Serf's LAN profile
/// ```
public struct MembershipConfig: Hashable, Sendable {
    /// How often each alive or suspect peer, and each unanswered seed, is probed (default 1 s).
    public var probeInterval: Int64
    /// Silence after which an alive peer becomes suspect (default 3 s).
    public var suspectAfter: Int64
    /// Silence after which a peer is gone (default 8 s). Also how long an unanswered probe is
    /// remembered for matching a late ack.
    public var goneAfter: Int64
    /// How often a gone peer is still probed, so one that comes back is noticed (default 5 s).
    public var goneProbeInterval: Int64
    /// Most peers listed in one probe or ack (default 32); fewer when they would not fit in
    /// ``WireLimits/maxDatagramBytes``. Successive messages rotate through the known peers.
    public var maxGossipPeers: Int
    /// Most peers known at once (default 256). A new peer beyond it replaces the gone peer seen
    /// longest ago, or is ignored when no peer is gone.
    public var maxPeers: Int

    /// The defaults, or the values given.
    public init(
        probeInterval: Int64 = 1_000_000, suspectAfter: Int64 = 3_000_000, goneAfter: Int64 = 8_000_000,
        goneProbeInterval: Int64 = 5_000_000, maxGossipPeers: Int = 32, maxPeers: Int = 256
    ) {
        self.probeInterval = probeInterval
        self.suspectAfter = suspectAfter
        self.goneAfter = goneAfter
        self.goneProbeInterval = goneProbeInterval
        self.maxGossipPeers = maxGossipPeers
        self.maxPeers = maxPeers
    }
}
