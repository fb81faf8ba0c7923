/// Per-address limits on incoming datagrams: token buckets per sender (host and port) and, more
/// loosely, per host. A flood from one address is dropped here, before it is decoded and before
/// any signature of it is checked, so it costs this node little and the chat of everyone else
/// goes on (`Scripts/bench --only attacks`).
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
/// A datagram's count says little of its cost: one datagram of 372 events with well-formed but
/// wrong signatures held a core for ~20 ms. So the signature checks of what strangers send are
/// budgeted too (``checks(_:from:now:)``): 200 a second per host with bursts of 400, and 1 000 a
/// second for all strangers together (5 % of a core here), with a bad signature costing ten
/// (``penalize(_:from:now:)``). Past it, the events are dropped unchecked (`check_budget`). A live
/// peer (its address proven, docs/PROTOCOL.md "Trust") has its own larger budget instead: 1 000
/// checks a second with bursts of 2 000, and 4 000 a second for all peers together, so one key
/// that proved an address cannot take a core (one did: 18 898 checks a second); a bad signature
/// costs it ten too. A pull is answered by a peer this node chose, and is not charged: what a
/// push over budget dropped, anti-entropy pulls.
///
/// Pure: time is passed in (the monotonic clock). At most ``maximumTracked`` buckets are kept
/// per kind; idle (full) ones are forgotten first.
public struct DatagramRateLimits: Sendable {
    struct Rate: Sendable {
        /// Datagrams a second, sustained.
        var perSecond: Double
        /// Datagrams at once, from a full bucket.
        var burst: Double
    }

    var perSender = Rate(perSecond: 400, burst: 800)
    var perHost = Rate(perSecond: 4_000, burst: 8_000)
    /// Signature checks of events from one stranger's host, and from every stranger together.
    private var strangerChecks = CheckBudget(each: Rate(perSecond: 200, burst: 400), all: Rate(perSecond: 1_000, burst: 2_000))
    /// Signature checks of events from one live peer's address, and from all of them together.
    private var peerChecks = CheckBudget(each: Rate(perSecond: 1_000, burst: 2_000), all: Rate(perSecond: 4_000, burst: 8_000))
    /// What a signature that does not verify costs its sender's budget, in checks.
    static let badSignatureCost = 10.0
    static let maximumTracked = 4_096

    private struct Bucket: Sendable {
        var tokens: Double
        var updated: MonotonicTime
    }

    /// Signature checks, per key (a stranger's host, a peer's address) and for all keys together.
    private struct CheckBudget: Sendable {
        let each: Rate
        let all: Rate
        var buckets: [String: Bucket] = [:]
        var total: Bucket?

        init(each: Rate, all: Rate) {
            self.each = each
            self.all = all
        }

        /// How many of `count` checks `key` may have; takes them.
        mutating func grant(_ count: Int, to key: String, now: MonotonicTime) -> Int {
            var own = DatagramRateLimits.refill(buckets[key], rate: each, now: now)
            var everyone = DatagramRateLimits.refill(total, rate: all, now: now)
            let granted = max(0, min(count, Int(own.tokens.rounded(.down)), Int(everyone.tokens.rounded(.down))))
            own.tokens -= Double(granted)
            everyone.tokens -= Double(granted)
            total = everyone
            DatagramRateLimits.store(own, at: key, in: &buckets, rate: each, now: now)
            return granted
        }

        func has(for key: String, now: MonotonicTime) -> Bool {
            DatagramRateLimits.refill(buckets[key], rate: each, now: now).tokens >= 1
                && DatagramRateLimits.refill(total, rate: all, now: now).tokens >= 1
        }

        /// `count` bad signatures from `key`: each costs ``badSignatureCost`` checks in all.
        mutating func penalize(_ count: Int, of key: String, now: MonotonicTime) {
            var own = DatagramRateLimits.refill(buckets[key], rate: each, now: now)
            own.tokens -= Double(count) * (DatagramRateLimits.badSignatureCost - 1)
            DatagramRateLimits.store(own, at: key, in: &buckets, rate: each, now: now)
        }
    }

    /// Senders never limited: the node's live peers.
    var exempt: Set<PeerAddress> = []

    private var senders: [PeerAddress: Bucket] = [:]
    private var hosts: [String: Bucket] = [:]
    /// Datagrams refused so far.
    public private(set) var refused = 0
    /// Buckets kept, senders and hosts together.
    var trackedCount: Int { senders.count + hosts.count + strangerChecks.buckets.count + peerChecks.buckets.count }

    /// How many of `count` events from `source` may have their signatures checked at `now`
    /// (the first ones of the datagram); takes as many checks from the budgets: a live peer's
    /// address has its own, a stranger shares its host's.
    mutating func checks(_ count: Int, from source: PeerAddress, now: MonotonicTime) -> Int {
        guard count > 0 else { return count }
        if exempt.contains(source) { return peerChecks.grant(count, to: source.description, now: now) }
        return strangerChecks.grant(count, to: source.host, now: now)
    }

    /// Whether `source` has any signature checks left at `now`: events from a sender that has
    /// none are dropped before they are even decoded.
    func hasChecks(for source: PeerAddress, now: MonotonicTime) -> Bool {
        exempt.contains(source)
            ? peerChecks.has(for: source.description, now: now) : strangerChecks.has(for: source.host, now: now)
    }

    /// `count` signatures from `source` did not verify: each costs its budget
    /// ``badSignatureCost`` checks in all (one was taken already).
    mutating func penalize(_ count: Int, from source: PeerAddress, now: MonotonicTime) {
        guard count > 0 else { return }
        if exempt.contains(source) {
            peerChecks.penalize(count, of: source.description, now: now)
        } else {
            strangerChecks.penalize(count, of: source.host, now: now)
        }
    }

    /// Whether a datagram from `source` arriving at `now` may be read; takes a token if so.
    mutating func admit(_ source: PeerAddress, now: MonotonicTime) -> Bool {
        if exempt.contains(source) { return true }
        var host = Self.refill(hosts[source.host], rate: perHost, now: now)
        var sender = Self.refill(senders[source], rate: perSender, now: now)
        let admitted = host.tokens >= 1 && sender.tokens >= 1
        if admitted {
            host.tokens -= 1
            sender.tokens -= 1
        } else {
            refused += 1
        }
        Self.store(host, at: source.host, in: &hosts, rate: perHost, now: now)
        Self.store(sender, at: source, in: &senders, rate: perSender, now: now)
        return admitted
    }

    private static func refill(_ bucket: Bucket?, rate: Rate, now: MonotonicTime) -> Bucket {
        guard var bucket else { return Bucket(tokens: rate.burst, updated: now) }
        let elapsed = max(.zero, now - bucket.updated).seconds
        bucket.tokens = min(rate.burst, bucket.tokens + elapsed * rate.perSecond)
        bucket.updated = now
        return bucket
    }

    /// Keeps `bucket`; past ``maximumTracked``, first forgets every bucket that has refilled
    /// (an idle sender starts full anyway), then, under a spray of forged addresses, all of them.
    private static func store<Key: Hashable>(
        _ bucket: Bucket, at key: Key, in buckets: inout [Key: Bucket], rate: Rate, now: MonotonicTime
    ) {
        if buckets[key] == nil, buckets.count >= maximumTracked {
            buckets = buckets.filter { refill($0.value, rate: rate, now: now).tokens < rate.burst }
            if buckets.count >= maximumTracked { buckets.removeAll(keepingCapacity: true) }
        }
        buckets[key] = bucket
    }
}
