/// How many datagrams a node relays: token buckets per requester and for all requesters together,
/// so a peer cannot turn a relay into a amplifier or a free pass around a target's rate limits.
///
/// ```swift
/// var budget = RelayBudget()
/// budget.admit(alice, now: 0)   // true, until alice has spent her burst faster than her rate
/// ```
public struct RelayBudget: Hashable, Sendable {
    /// Datagrams a second one requester may have relayed (default 100; a node pushing a message
    /// a second to a handful of peers needs a few).
    public var perRequester: Int64 = 100
    /// Datagrams a second relayed for everyone together (default 400).
    public var total: Int64 = 400
    /// A bucket holds this long of its rate (default 2 s): the burst.
    public var burst: TimeSpan = .seconds(2)
    /// Most requesters tracked at once (the peer table's size bounds them anyway).
    static let maxRequesters = 256

    struct Bucket: Hashable, Sendable {
        var tokens: Int64  // in millionths of a datagram: a rate of one a second makes one a µs
        var at: MonotonicTime
    }

    var buckets: [NodeID: Bucket] = [:]
    var all: Bucket?

    public init() {}

    /// Whether one more datagram from `requester` may be relayed at `now`; spends it if so.
    public mutating func admit(_ requester: NodeID, now: MonotonicTime) -> Bool {
        var mine = refill(buckets[requester], rate: perRequester, now: now)
        var everyone = refill(all, rate: total, now: now)
        guard mine.tokens >= 1_000_000, everyone.tokens >= 1_000_000 else {
            buckets[requester] = mine
            all = everyone
            return false
        }
        mine.tokens -= 1_000_000
        everyone.tokens -= 1_000_000
        if buckets[requester] == nil, buckets.count >= Self.maxRequesters {
            buckets = buckets.filter { now - $0.value.at < burst }
        }
        buckets[requester] = mine
        all = everyone
        return true
    }

    private func refill(_ bucket: Bucket?, rate: Int64, now: MonotonicTime) -> Bucket {
        let capacity = rate.clampedMultiplied(by: burst.microseconds)
        guard let bucket else { return Bucket(tokens: capacity, at: now) }
        let elapsed = max(.zero, now - bucket.at)
        let earned = elapsed.microseconds.clampedMultiplied(by: rate)
        return Bucket(tokens: min(capacity, bucket.tokens.clampedAdding(earned)), at: now)
    }
}
