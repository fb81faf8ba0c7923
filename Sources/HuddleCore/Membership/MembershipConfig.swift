/// Timing and bounds of ``Membership``. Every time is a span of the node's monotonic clock.
///
/// With the defaults a node that dies is noticed by the next node to probe it (each node probes
/// one peer a second, so about one probe a second reaches any node); it is suspect once it has
/// answered nothing, directly or through other members, for 2.5 s (three periods), and gone 2 s
/// later when other members confirm (5 s when nobody does): reported gone everywhere within
/// about 8 s, under the 10 s the design asks, while a node frozen for 2 s is never suspected.
///
/// ```swift
/// var config = MembershipConfig()
/// config.probeInterval = .milliseconds(200)   // a protocol period of 200 ms, like Serf's LAN profile
/// let plain = MembershipConfig.swim   // SWIM as it was: no helpers, no local health
/// ```
public struct MembershipConfig: Hashable, Sendable {
    /// The protocol period (default 1 s): each period one peer, the next in turn, is probed; it
    /// is suspect if none of the period's probes to it is answered.
    public var probeInterval: TimeSpan
    /// How many probes a period sends its peer while none is answered, evenly spaced over the
    /// period (default 4). At 20 % datagram loss a probe and its ack both arrive 64 % of the time,
    /// so one of four gets through 98 % of the time.
    public var probeAttempts: Int
    /// How long a suspicion nobody confirms lasts before the peer is gone, unless it refutes by
    /// raising its incarnation (default 5 s): Lifeguard's longest suspicion timeout.
    public var suspicionTimeout: TimeSpan
    /// The shortest suspicion (default 2 s, never above ``suspicionTimeout``): a suspicion shrinks
    /// from ``suspicionTimeout`` toward it as other members confirm it (Lifeguard's dynamic
    /// suspicion), reaching it with ``indirectProbes`` confirmations (fewer when fewer peers could
    /// confirm).
    public var minSuspicionTimeout: TimeSpan
    /// How many other members are asked to probe a peer whose direct probe went unanswered
    /// (SWIM's ping-req; default 3, 0: none). They are asked again at each of the period's retries.
    public var indirectProbes: Int
    /// How long a peer must have answered none of this node's probes, direct or indirect, before
    /// it is suspected (default 2.5 s, longer than a 2 s freeze; 0: at the end of the first
    /// unanswered period, as plain SWIM). Until then it is only doubted, which nobody is told: a
    /// doubted peer is probed in every period. Also how long a direct contact outweighs one gossip
    /// record saying the peer is suspect or gone.
    public var silenceBeforeSuspicion: TimeSpan
    /// The highest local health score (default 8; 0: no local health). The score rises when this
    /// node shows signs of being slow itself (its timer fires late, helpers' nacks do not arrive,
    /// it has to refute a suspicion) and falls with each period answered at once; the probe
    /// interval, the probe timeout and ``silenceBeforeSuspicion`` are stretched by (1 + score):
    /// Lifeguard's Local Health Multiplier.
    public var maxHealth: Int
    /// How often a gone peer is still probed, so one that comes back is noticed (default 5 s).
    public var goneProbeInterval: TimeSpan
    /// How long a change of a peer's state is gossiped before the rest (default 10 s): it goes
    /// into every probe and ack first, so it reaches everyone in a few periods.
    public var freshGossipFor: TimeSpan
    /// Most peers listed in one probe or ack (default 32); fewer when they would not fit in
    /// ``WireLimits/maxDatagramBytes``. Successive messages rotate through the known peers.
    public var maxGossipPeers: Int
    /// Most peers known at once (default 256). A new peer beyond it replaces the gone peer seen
    /// longest ago, or is ignored when no peer is gone.
    public var maxPeers: Int
    /// Most nodes known only from gossip at once, waiting to answer a probe (default 32, one
    /// peer list): see `Membership+Hearsay`. They never take a peer's place.
    public var maxHearsay = 32
    /// How long a node known only from gossip is probed before it is forgotten (default 5 s).
    public var hearsayLifetime: TimeSpan = .seconds(5)
    /// How long a peer whose address never answered (outside the probe ring) may say nothing
    /// before it is suspect (default 2.5 s); gone, it is forgotten (`Membership+Trust`).
    public var unprovenSilence: TimeSpan = .milliseconds(2_500)
    /// How long a relay's path to a peer counts after it last carried an answer (default 3 s):
    /// a peer that answers only through relays is probed through them every period, so a path
    /// silent for three is broken, and another relay is chosen.
    public var relayPathLifetime: TimeSpan = .seconds(3)
    /// Most peers kept alive in one period besides the ring's (default 8; 0: none): peers not
    /// found on this node's own link are probed every period, so a NAT between keeps its mapping
    /// and a router that forgot it (a reboot) gets a new one within a period. See
    /// `Membership+KeepAlive`.
    public var keepAlivePeers: Int

    /// The defaults, or the values given.
    public init(
        probeInterval: TimeSpan = .seconds(1), probeAttempts: Int = 4, suspicionTimeout: TimeSpan = .seconds(5),
        minSuspicionTimeout: TimeSpan = .seconds(2), indirectProbes: Int = 3,
        silenceBeforeSuspicion: TimeSpan = .milliseconds(2_500), maxHealth: Int = 8,
        goneProbeInterval: TimeSpan = .seconds(5), freshGossipFor: TimeSpan = .seconds(10),
        maxGossipPeers: Int = 32, maxPeers: Int = 256, keepAlivePeers: Int = 8
    ) {
        precondition(probeInterval > .zero && probeAttempts > 0, "a period needs a length and at least one probe")
        self.probeInterval = probeInterval
        self.probeAttempts = probeAttempts
        self.suspicionTimeout = suspicionTimeout
        self.minSuspicionTimeout = min(minSuspicionTimeout, suspicionTimeout)
        self.indirectProbes = max(0, indirectProbes)
        self.silenceBeforeSuspicion = max(.zero, silenceBeforeSuspicion)
        self.maxHealth = max(0, maxHealth)
        self.goneProbeInterval = goneProbeInterval
        self.freshGossipFor = freshGossipFor
        self.maxGossipPeers = maxGossipPeers
        self.maxPeers = maxPeers
        self.keepAlivePeers = max(0, keepAlivePeers)
    }

    /// SWIM as Huddle ran it before Lifeguard: a peer is suspect at the end of its first
    /// unanswered period and gone 4 s later, nobody else is asked to probe it, the timing never
    /// stretches, and only the ring's peer is probed. For comparison (the simulator runs both) and
    /// for tests of the plain protocol.
    public static let swim = MembershipConfig(
        suspicionTimeout: .seconds(4), minSuspicionTimeout: .seconds(4), indirectProbes: 0,
        silenceBeforeSuspicion: .zero, maxHealth: 0, keepAlivePeers: 0)

    /// How long an unanswered probe is remembered, so a late ack still counts as contact.
    var probeMemory: TimeSpan { probeInterval + suspicionTimeout }
}
