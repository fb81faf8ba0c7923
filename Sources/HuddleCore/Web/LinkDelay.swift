/// How long a page's link takes one way, from the node's pings and the page's pongs: a mark
/// tapped on the page is taken back by it (docs/WEB.md, `now`). Half the median of the last
/// ``keptRoundTrips`` round trips, so one slow answer does not move a mark. Pure: time is passed in.
///
/// ```swift
/// var link = LinkDelay()
/// let id = link.ping(now: now)          // {"t":"ping","id":…} goes out
/// link.pong(id, now: later)             // its answer came back
/// let tappedAt = arrived - link.oneWay
/// ```
public struct LinkDelay: Sendable {
    /// Round trips the median is taken over.
    public static let keptRoundTrips = 9
    /// Pings waiting for an answer; past it the oldest is forgotten (its pong, if it comes, too).
    public static let outstandingPings = 16

    private var sent: [Int: MonotonicTime] = [:]
    private var roundTrips: [TimeSpan] = []
    private var lastPing = 0

    public init() {}

    /// A ping leaves at `now`: the id it carries.
    public mutating func ping(now: MonotonicTime) -> Int {
        lastPing += 1
        sent[lastPing] = now
        if sent.count > Self.outstandingPings, let oldest = sent.keys.min() { sent[oldest] = nil }
        return lastPing
    }

    /// The answer to ping `id` arrived at `now`; an answer to no ping sent (or one forgotten) counts
    /// for nothing.
    public mutating func pong(_ id: Int, now: MonotonicTime) {
        guard let at = sent.removeValue(forKey: id) else { return }
        roundTrips.append(now - at)
        if roundTrips.count > Self.keptRoundTrips { roundTrips.removeFirst() }
    }

    /// Half the median round trip; zero before any answer.
    public var oneWay: TimeSpan {
        guard !roundTrips.isEmpty else { return .zero }
        let sorted = roundTrips.sorted()
        return .microseconds(sorted[sorted.count / 2].microseconds / 2)
    }
}
