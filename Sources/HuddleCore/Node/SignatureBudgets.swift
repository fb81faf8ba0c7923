/// Each sender's budget of signature checks, kept by the machine at each input's time
/// (`NodeMachine+Admission`).
///
/// A datagram's count says little of its cost: one datagram of 372 events with well-formed but
/// wrong signatures held a core for ~20 ms. So the signature checks of what strangers send are
/// budgeted: 200 a second per host with bursts of 400, and 1 000 a second for all strangers
/// together (5 % of a core here), with a bad signature costing ten (``penalize(_:from:now:)``).
/// Past it, the events are dropped unchecked (`check_budget`). A live peer (its address proven,
/// docs/PROTOCOL.md "Trust") has its own larger budget instead: 1 000 checks a second with bursts
/// of 2 000, and 4 000 a second for all peers together, so one key that proved an address cannot
/// take a core (one did: 18 898 checks a second); a bad signature costs it ten too. A pull is
/// answered by a peer this node chose, and is not charged: what a push over budget dropped,
/// anti-entropy pulls.
public struct SignatureBudgets: Sendable {
    public init() {}

    typealias Rate = TokenBuckets.Rate
    typealias Bucket = TokenBuckets.Bucket

    /// Signature checks of events from one stranger's host, and from every stranger together.
    private var strangerChecks = CheckBudget(each: Rate(perSecond: 200, burst: 400), all: Rate(perSecond: 1_000, burst: 2_000))
    /// Signature checks of events from one live peer's address, and from all of them together.
    private var peerChecks = CheckBudget(each: Rate(perSecond: 1_000, burst: 2_000), all: Rate(perSecond: 4_000, burst: 8_000))
    /// What a signature that does not verify costs its sender's budget, in checks.
    static let badSignatureCost = 10.0
    /// The live peers' addresses, which have the peers' budget.
    var exempt: Set<PeerAddress> = []

    /// Signature checks, per key (a stranger's host, a peer's address) and for all keys together.
    struct CheckBudget: Sendable {
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
            var own = TokenBuckets.refill(buckets[key], rate: each, now: now)
            var everyone = TokenBuckets.refill(total, rate: all, now: now)
            let granted = max(0, min(count, Int(own.tokens.rounded(.down)), Int(everyone.tokens.rounded(.down))))
            own.tokens -= Double(granted)
            everyone.tokens -= Double(granted)
            total = everyone
            TokenBuckets.store(own, at: key, in: &buckets, rate: each, now: now)
            return granted
        }

        func has(for key: String, now: MonotonicTime) -> Bool {
            TokenBuckets.refill(buckets[key], rate: each, now: now).tokens >= 1
                && TokenBuckets.refill(total, rate: all, now: now).tokens >= 1
        }

        /// `count` bad signatures from `key`: each costs ``badSignatureCost`` checks in all.
        mutating func penalize(_ count: Int, of key: String, now: MonotonicTime) {
            var own = TokenBuckets.refill(buckets[key], rate: each, now: now)
            own.tokens -= Double(count) * (SignatureBudgets.badSignatureCost - 1)
            TokenBuckets.store(own, at: key, in: &buckets, rate: each, now: now)
        }
    }

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
}
