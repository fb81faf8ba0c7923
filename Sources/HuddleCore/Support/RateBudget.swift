/// How many of something a node takes from each peer and from all of them together: token
/// buckets per node and for everyone. The datagrams it relays (``Membership/relayBudget``: a
/// peer cannot turn a relay into an amplifier or a free pass around a target's rate limits), the
/// sound windows it opens (``NodeMachine/soundWindowBudget``).
///
/// ```swift
/// var budget = RateBudget(perPeer: 100, total: 400, burst: .seconds(2))
/// budget.admit(alice, now: 0)   // true, until alice has spent her burst faster than her rate
/// ```
public struct RateBudget: Hashable, Sendable {
    /// How many a second one peer may have.
    public var perPeer: Int64
    /// How many a second everyone together may have.
    public var total: Int64
    /// A peer's bucket holds this long of its rate: the burst.
    public var burst: TimeSpan
    /// Everyone's bucket holds this long of its rate.
    public var totalBurst: TimeSpan
    /// Most peers tracked at once (the peer table's size bounds them anyway).
    static let maxTracked = 256

    struct Bucket: Hashable, Sendable {
        var tokens: Int64  // in millionths of a datagram: a rate of one a second makes one a µs
        var at: MonotonicTime
    }

    var buckets: [NodeID: Bucket] = [:]
    var all: Bucket?

    /// `totalBurst` is `burst` unless given.
    public init(perPeer: Int64, total: Int64, burst: TimeSpan, totalBurst: TimeSpan? = nil) {
        self.perPeer = perPeer
        self.total = total
        self.burst = burst
        self.totalBurst = totalBurst ?? burst
    }

    /// Whether one more from `requester` may be taken at `now`; spends it if so.
    public mutating func admit(_ requester: NodeID, now: MonotonicTime) -> Bool {
        var mine = refill(buckets[requester], rate: perPeer, burst: burst, now: now)
        var everyone = refill(all, rate: total, burst: totalBurst, now: now)
        guard mine.tokens >= 1_000_000, everyone.tokens >= 1_000_000 else {
            buckets[requester] = mine
            all = everyone
            return false
        }
        mine.tokens -= 1_000_000
        everyone.tokens -= 1_000_000
        if buckets[requester] == nil, buckets.count >= Self.maxTracked {
            buckets = buckets.filter { now - $0.value.at < burst }
        }
        buckets[requester] = mine
        all = everyone
        return true
    }

    private func refill(_ bucket: Bucket?, rate: Int64, burst: TimeSpan, now: MonotonicTime) -> Bucket {
        let capacity = rate.clampedMultiplied(by: burst.microseconds)
        guard let bucket else { return Bucket(tokens: capacity, at: now) }
        let elapsed = max(.zero, now - bucket.at)
        let earned = elapsed.microseconds.clampedMultiplied(by: rate)
        return Bucket(tokens: min(capacity, bucket.tokens.clampedAdding(earned)), at: now)
    }
}
