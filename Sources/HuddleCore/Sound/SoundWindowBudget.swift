/// How many sound windows this node opens, per sender and in all: a listening node sends a peer
/// at most one 2 s window every 2 s (three at once when it starts listening), so more than that
/// is a flood, dropped before its signature is checked or its seal opened (`sound_budget`).
/// Round 3: 16 member identities flooding windows took a node from 2 % to 51 % of a core, in
/// bursts of a full core. Token buckets on the node's monotonic clock; pure.
///
/// ```swift
/// var budget = SoundWindowBudget()
/// budget.admit(from: bob, now: now)   // true: bob's first windows
/// ```
public struct SoundWindowBudget: Sendable {
    /// Windows a second from one sender, and at once from a full bucket.
    public static let perSender = (perSecond: 1.0, burst: 4.0)
    /// Windows a second from every sender together.
    public static let overall = (perSecond: 8.0, burst: 16.0)
    /// Most senders tracked: a peer table's worth.
    static let maximumTracked = 256

    private struct Bucket: Sendable {
        var tokens: Double
        var updated: MonotonicTime
    }

    private var senders: [NodeID: Bucket] = [:]
    private var all: Bucket?

    public init() {}

    /// Whether a window from `sender` may be taken at `now`; takes a token from both buckets if so.
    public mutating func admit(from sender: NodeID, now: MonotonicTime) -> Bool {
        var own = Self.refill(senders[sender], Self.perSender, now: now)
        var everyone = Self.refill(all, Self.overall, now: now)
        guard own.tokens >= 1, everyone.tokens >= 1 else { return false }
        own.tokens -= 1
        everyone.tokens -= 1
        all = everyone
        if senders[sender] == nil, senders.count >= Self.maximumTracked {
            // Full buckets say nothing a new one would not: forget them first.
            senders = senders.filter { Self.refill($0.value, Self.perSender, now: now).tokens < Self.perSender.burst }
            if senders.count >= Self.maximumTracked { senders.removeAll() }
        }
        senders[sender] = own
        return true
    }

    private static func refill(_ bucket: Bucket?, _ rate: (perSecond: Double, burst: Double), now: MonotonicTime) -> Bucket {
        guard var bucket else { return Bucket(tokens: rate.burst, updated: now) }
        bucket.tokens = min(rate.burst, bucket.tokens + max(.zero, now - bucket.updated).seconds * rate.perSecond)
        bucket.updated = now
        return bucket
    }
}
