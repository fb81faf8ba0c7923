/// Timing and bounds of ``Replication``. Times are spans of the node's monotonic clock.
///
/// ```swift
/// var config = ReplicationConfig()
/// config.tailDelays = [.milliseconds(50)]   // one round of tail digests, 50 ms after a burst
/// ```
public struct ReplicationConfig: Hashable, Sendable {
    /// How often each room swaps digests with one random live peer (default 1 s).
    public var antiEntropyInterval: TimeSpan
    /// While a gap stays open, the waits between the digests sent to repair it: the first digest
    /// goes at once, the next after the first delay, and so on; the last delay repeats (default
    /// 40, 80, 160, 320 ms, then every 500 ms). A LAN round trip is a few milliseconds, Wi-Fi's
    /// tens, so a lost request or answer is retried well before a person notices.
    public var repairDelays: [TimeSpan]
    /// When, after the last event this node made in a room, its rounds of tail digests go out
    /// (default 100 and 400 ms, each plus three of the room's longest round trips): later than a
    /// burst's next push would come, sooner than anyone notices; the second for a peer that lost
    /// the first (or the push it answers).
    public var tailDelays: [TimeSpan]
    /// In a room that has shown no loss for ``lossMemory``: how many other nodes' events must
    /// cover this node's last event before its tail digests stop, and must have arrived since the
    /// last anti-entropy round for the room to skip it (default 2). Their causal contexts show
    /// any gap already.
    public var witnesses: Int
    /// How long after a room last showed a loss (a gap, or a digest showing events this node
    /// lacks) its tail digests and anti-entropy rounds go out whatever the room says (default 10 s).
    public var lossMemory: TimeSpan
    /// The longest round trip the tail digests wait for (default 500 ms).
    public var maxRoundTrip: TimeSpan
    /// Least time between two answers (a push, or a digest) to one peer's digests for one room
    /// (default 20 ms), so a peer that floods digests gets at most 50 pushes a second.
    public var answerInterval: TimeSpan
    /// Most events one push in answer to a digest carries (default 64). A peer missing more is
    /// better served by a TCP pull, which it starts when it sees the difference.
    public var maxPushEvents: Int
    /// Most bytes of events one push in answer to a digest carries (default 16 KiB): far under a
    /// datagram, so a digest (about 100 bytes) cannot make this node send much more to anyone.
    public var maxPushBytes: Int
    /// Least time between two rechecks of one origin's events with one peer (default 30 s): a
    /// recheck is a TCP pull of that origin's last events, when the peer's digest shows it holds
    /// different ones (its chain fingerprint differs at a seq both hold).
    public var recheckInterval: TimeSpan = .seconds(30)
    /// How many of the origin's events below the differing seq a recheck pulls (default 1 024).
    public var recheckDepth: UInt64 = 1024
    /// Least time between two pushes of one origin's proof of equivocation to one peer whose
    /// digests show it lacks it (default 1 s).
    public var evidenceInterval: TimeSpan = .seconds(1)

    public init(
        antiEntropyInterval: TimeSpan = .seconds(1),
        repairDelays: [TimeSpan] = [40, 80, 160, 320, 500].map { .milliseconds($0) },
        tailDelays: [TimeSpan] = [.milliseconds(100), .milliseconds(400)], witnesses: Int = 2,
        lossMemory: TimeSpan = .seconds(10), maxRoundTrip: TimeSpan = .milliseconds(500),
        answerInterval: TimeSpan = .milliseconds(20), maxPushEvents: Int = 64, maxPushBytes: Int = 16 * 1024
    ) {
        precondition(!repairDelays.isEmpty, "repairDelays needs at least one delay")
        precondition(!tailDelays.isEmpty && tailDelays == tailDelays.sorted(), "tailDelays: at least one, ascending")
        self.antiEntropyInterval = antiEntropyInterval
        self.repairDelays = repairDelays
        self.tailDelays = tailDelays
        self.witnesses = witnesses
        self.lossMemory = lossMemory
        self.maxRoundTrip = maxRoundTrip
        self.answerInterval = answerInterval
        self.maxPushEvents = maxPushEvents
        self.maxPushBytes = maxPushBytes
    }
}
