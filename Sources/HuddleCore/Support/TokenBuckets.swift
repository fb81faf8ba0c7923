/// Token buckets as the admission budgets keep them (``DatagramRateLimits``, ``SignatureBudgets``):
/// a rate, a bucket refilled at it from the time it was last touched, and a bounded table of
/// buckets by key. Pure: time is passed in (the monotonic clock).
///
/// ```swift
/// var bucket = TokenBuckets.refill(buckets[key], rate: rate, now: now)   // full if new
/// bucket.tokens -= 1
/// TokenBuckets.store(bucket, at: key, in: &buckets, rate: rate, now: now)
/// ```
enum TokenBuckets {
    struct Rate: Sendable {
        /// Tokens a second, sustained.
        var perSecond: Double
        /// Tokens at once, from a full bucket.
        var burst: Double
    }

    struct Bucket: Sendable {
        var tokens: Double
        var updated: MonotonicTime
    }

    /// Most buckets a table keeps.
    static let maximumTracked = 4_096

    /// `bucket` refilled at `rate` up to `now` (a new key's bucket starts full).
    static func refill(_ bucket: Bucket?, rate: Rate, now: MonotonicTime) -> Bucket {
        guard var bucket else { return Bucket(tokens: rate.burst, updated: now) }
        let elapsed = max(.zero, now - bucket.updated).seconds
        bucket.tokens = min(rate.burst, bucket.tokens + elapsed * rate.perSecond)
        bucket.updated = now
        return bucket
    }

    /// Keeps `bucket`; past ``maximumTracked``, first forgets every bucket that has refilled
    /// (an idle sender starts full anyway), then, under a spray of forged addresses, all of them.
    static func store<Key: Hashable>(
        _ bucket: Bucket, at key: Key, in buckets: inout [Key: Bucket], rate: Rate, now: MonotonicTime
    ) {
        if buckets[key] == nil, buckets.count >= maximumTracked {
            buckets = buckets.filter { refill($0.value, rate: rate, now: now).tokens < rate.burst }
            if buckets.count >= maximumTracked { buckets.removeAll(keepingCapacity: true) }
        }
        buckets[key] = bucket
    }
}
