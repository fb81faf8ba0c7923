/// Per-address limits on incoming datagrams: token buckets per sender (host and port) and, more
/// loosely, per host. A flood from one address is dropped here, before it is decoded and before
/// it reaches the node's actor, so it costs this node little and the chat of everyone else goes
/// on (`Scripts/bench --only attacks`). The one rule the shell applies itself, off the actor, at
/// the datagram's arrival: under a flood of 60,000 datagrams a second, taking each onto the actor
/// first doubled a peer's p99 (4 → 8 ms). The machine owns every other budget
/// (``SignatureBudgets``) and says whom to exempt (``NodeEffect/vouchedPeers(_:incarnation:)``).
///
/// The addresses of this node's live peers are ``exempt``: a UDP source address can be forged,
/// and a budget on a peer's address would let anyone silence that peer by spending it (a few
/// hundred forged datagrams a second). A flood forged as a peer is therefore not limited here;
/// it costs what it cost before there were limits, bounded by the kernel's socket buffer.
///
/// A node sends a peer a handful of datagrams a second (probes, digests, a push per message), so
/// the limits are far above what any honest peer reaches: 400 a second per sender with bursts
/// of 800, and 4 000 a second per host (several nodes may share one host, as on a test machine).
/// UDP source addresses can be forged on a LAN; a flooder that forges many loses its bucket per
/// address, not the ability to send, and is still bounded by the kernel's socket buffer.
///
/// Pure: time is passed in (the monotonic clock). At most ``maximumTracked`` buckets are kept
/// per kind; idle (full) ones are forgotten first.
public struct DatagramRateLimits: Sendable {
    public init() {}

    typealias Rate = TokenBuckets.Rate
    typealias Bucket = TokenBuckets.Bucket

    var perSender = Rate(perSecond: 400, burst: 800)
    var perHost = Rate(perSecond: 4_000, burst: 8_000)
    static let maximumTracked = TokenBuckets.maximumTracked

    /// Senders never limited: the node's live peers.
    public var exempt: Set<PeerAddress> = []

    private var senders: [PeerAddress: Bucket] = [:]
    private var hosts: [String: Bucket] = [:]
    /// Datagrams refused so far.
    public private(set) var refused = 0
    /// Buckets kept, senders and hosts together.
    var trackedCount: Int { senders.count + hosts.count }

    /// Whether a datagram from `source` arriving at `now` may be read; takes a token if so.
    public mutating func admit(_ source: PeerAddress, now: MonotonicTime) -> Bool {
        if exempt.contains(source) { return true }
        var host = TokenBuckets.refill(hosts[source.host], rate: perHost, now: now)
        var sender = TokenBuckets.refill(senders[source], rate: perSender, now: now)
        let admitted = host.tokens >= 1 && sender.tokens >= 1
        if admitted {
            host.tokens -= 1
            sender.tokens -= 1
        } else {
            refused += 1
        }
        TokenBuckets.store(host, at: source.host, in: &hosts, rate: perHost, now: now)
        TokenBuckets.store(sender, at: source, in: &senders, rate: perSender, now: now)
        return admitted
    }
}
