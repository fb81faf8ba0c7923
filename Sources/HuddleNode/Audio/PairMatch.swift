public import HuddleAudio
public import HuddleCore

/// One match of this node's own sound against a peer's, as the runner makes it every 30 s: the
/// search is centred on what is already known (the two machines' clock difference, or the last
/// lag found), so a ±120 s search finds streams 120 s apart whatever the clocks say, and a ±5 s
/// one re-checks a known lag 24 times more cheaply. Pure: the same features give the same match.
///
/// ```swift
/// let found = PairMatch.run(own: mine, peer: bobs, peerID: bob, centre: clockDifference, reach: 120)
/// found.heard        // a HeardMatch to publish when the match is aligned, else nil
/// ```
public struct PairMatch: Sendable, Equatable {
    /// The matcher's verdict and figures, with `bestLag` in seconds of the two node clocks
    /// (centre added back).
    public var match: AudioMatch
    /// The match as a `heard` event's body, when it is aligned.
    public var heard: HeardMatch?

    /// Matches `own` against `peer` (`peerID`'s features on its clock) over lags `centre ± reach`
    /// (ms and s); `at` of the result is the middle of the sound both heard, on the own clock.
    public static func run(
        own: AudioFeatures, peer: AudioFeatures, peerID: NodeID, centre: Int64, reach: Double,
        matcher: AudioMatcher = AudioMatcher()
    ) -> PairMatch {
        var shifted = peer
        shifted.start = peer.start &- centre
        var matcher = matcher
        matcher.maxLag = reach
        var match = matcher.match(own, shifted)
        match.bestLag = match.bestLag.map { $0 + Double(centre) / 1000 }
        guard let lag = match.offset else { return PairMatch(match: match, heard: nil) }
        let lagMillis = lag * 1000
        let from = max(Double(own.start), Double(peer.start) - lagMillis)
        let to = min(
            Double(own.start) + own.duration * 1000, Double(peer.start) + peer.duration * 1000 - lagMillis)
        let heard = HeardMatch(
            peer: peerID, at: .milliseconds(sinceEpoch: Int64(((from + to) / 2).rounded())), lag: .seconds(lag),
            confidence: match.confidence)
        return PairMatch(match: match, heard: heard)
    }
}
