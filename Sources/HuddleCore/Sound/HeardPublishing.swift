/// When a listening node publishes an aligned match as a `heard` event (docs/PROTOCOL.md, "Sound
/// windows and heard matches"): the first about a peer since the peer's latest join, then when the
/// lag moved by more than ``tolerance`` from the last published, or ``refresh`` after it; never
/// more often than ``minimumInterval`` per peer. About a dozen events an hour per pair whose lag
/// holds, and one within 30 s of a rebuffer. Pure: the node passes `now`.
///
/// ```swift
/// var publishing = HeardPublishing()
/// if publishing.shouldPublish(match, now: now) { originate(.heard(match), in: room) }
/// publishing.peerJoined(bob)     // bob's join reset him: the next match goes out at once
/// ```
public struct HeardPublishing: Sendable {
    /// A lag that moved by more than this is published.
    public var tolerance = TimeSpan.milliseconds(20)
    /// A lag that held is published again after this long.
    public var refresh = TimeSpan.seconds(300)
    /// At most one `heard` per peer per this long.
    public var minimumInterval = TimeSpan.seconds(25)
    /// The least confidence (tenths) this node publishes: above the 9 a match needs to count
    /// anywhere (``HeardMatch/minimumConfidenceTenths``), because a match can be right about the
    /// wrong sound. The TV in the next room, heard at -15 dB under one's own, matched the
    /// viewer watching that programme at 9.3 (Tests/e2e/test_listening.py); one's own screen
    /// matches at 30 and more.
    public var minimumConfidenceTenths: UInt16 = 150

    private var last: [NodeID: (at: WallTime, lag: TimeSpan)] = [:]

    public init() {}

    /// Whether to publish `match` now; if so, it is noted as the last published about its peer.
    public mutating func shouldPublish(_ match: HeardMatch, now: WallTime) -> Bool {
        guard match.confidenceTenths >= max(minimumConfidenceTenths, HeardMatch.minimumConfidenceTenths) else { return false }
        if let previous = last[match.peer] {
            guard now - previous.at >= minimumInterval else { return false }
            let moved = (match.lag - previous.lag).magnitude > tolerance
            guard moved || now - previous.at >= refresh else { return false }
        }
        last[match.peer] = (now, match.lag)
        return true
    }

    /// The peer (re-)joined: its calibration starts over, so the next match is published at once.
    public mutating func peerJoined(_ peer: NodeID) {
        last[peer] = nil
    }

}
