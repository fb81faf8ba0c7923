/// What a listening node found by matching *its own* sound against a peer's: the peer heard the
/// same moment `lag` later on its clock than this node did on its own. Published as a room event
/// (``EventBody/heard(_:)``), signed by the node whose ears are one side of it, so every node's
/// solver works from the same events (see docs/PROTOCOL.md, "Sound", and docs/AUDIO.md).
///
/// To the solver it is an edge between two viewers, like both marking one unnamed moment: the
/// publisher at `at` on its clock, the peer at `at + lag` on the peer's, with the uncertainty
/// `sigma` instead of a thumb's 200 ms.
///
/// ```swift
/// // alice heard the touchdown at 1 000 000 ms on her clock; bob's clock read 1 003 198.4 ms
/// // when his stream played it; the matcher's confidence was 106.3:
/// let match = HeardMatch(
///     peer: bob, at: .milliseconds(sinceEpoch: 1_000_000), lag: .microseconds(3_198_400), confidence: 106.3)
/// match.sigma       // 8 467 µs: 900 ms / confidence
/// ```
public struct HeardMatch: Hashable, Sendable {
    /// The other node: whose features were matched against the publisher's own.
    public var peer: NodeID
    /// On the publisher's wall clock: the middle of the sound both heard, to the millisecond (the
    /// wire's unit; finer is dropped, down).
    public var at: WallTime {
        get { .milliseconds(sinceEpoch: atMilliseconds) }
        set { atMilliseconds = newValue.millisecondsSinceEpoch }
    }
    /// ``at`` as the wire carries it and the signature covers it: ms since the epoch, any `i64`,
    /// kept as it came (see ``Event/createdAt``).
    var atMilliseconds: Int64
    /// How much later the peer's clock read than the publisher's for the same sound (the
    /// streams' lag plus the difference between the two machines' clocks); negative: earlier.
    public var lag: TimeSpan
    /// The standard deviation the publisher gives ``lag`` (see ``sigma(confidence:)``): whole µs,
    /// 0 to 2³² − 1 (a `u32` on the wire).
    public var sigma: TimeSpan { .microseconds(sigmaMicros) }
    /// ``sigma`` as the wire carries it.
    var sigmaMicros: UInt32
    /// The matcher's confidence (the peak's standard score), in tenths.
    public var confidenceTenths: UInt16

    /// A match as given; `sigma` is kept to whole µs within what the wire carries (0 to
    /// 2³² − 1 µs, about 71 minutes).
    public init(peer: NodeID, at: WallTime, lag: TimeSpan, sigma: TimeSpan, confidenceTenths: UInt16) {
        self.init(
            peer: peer, atMilliseconds: at.millisecondsSinceEpoch, lag: lag,
            sigmaMicros: UInt32(clamping: sigma.microseconds), confidenceTenths: confidenceTenths)
    }

    /// A match as the wire carries it.
    init(peer: NodeID, atMilliseconds: Int64, lag: TimeSpan, sigmaMicros: UInt32, confidenceTenths: UInt16) {
        self.peer = peer
        self.atMilliseconds = atMilliseconds
        self.lag = lag
        self.sigmaMicros = sigmaMicros
        self.confidenceTenths = confidenceTenths
    }

    /// A match with the uncertainty its confidence gives it (``sigma(confidence:)``).
    public init(peer: NodeID, at: WallTime, lag: TimeSpan, confidence: Double) {
        let tenths = (confidence * 10).rounded()
        self.init(
            peer: peer, at: at, lag: lag, sigma: Self.sigma(confidence: confidence),
            confidenceTenths: tenths.isFinite ? UInt16(max(0, min(Double(UInt16.max), tenths))) : 0)
    }

    /// The matcher's confidence as a standard score.
    public var confidence: Double { Double(confidenceTenths) / 10 }

    /// The lowest confidence a match must have to count anywhere: the matcher's threshold (9).
    /// Every node applies it to every `heard` event, so a weak match is no match whoever
    /// published it.
    public static let minimumConfidenceTenths: UInt16 = 90

    /// The uncertainty a publisher gives a match of this confidence: 900 ms / confidence, to the
    /// µs, at least 2 ms (at most what the wire carries). At the threshold (9) that is 100 ms,
    /// half a thumb's; at 45, the lowest confidence of a correct match at 5 dB SNR on the bench,
    /// 20 ms (its p99 error target is 50 ms); above 450, 2 ms. Deliberately cautious: the bench's
    /// errors are smaller (BENCHMARKS.md, part 13).
    public static func sigma(confidence: Double) -> TimeSpan {
        guard confidence.isFinite, confidence > 0 else { return .microseconds(UInt32.max) }
        let sigma = (900_000 / confidence).rounded()
        return .microseconds(UInt32(max(2_000, min(Double(UInt32.max), sigma))))
    }

    /// The thumb's standard deviation the solver weighs everything against: 200 ms.
    public static let tapSigma = TimeSpan.milliseconds(200)

    /// The peer's clock reading for the moment, in whole milliseconds as marks are: `at + lag`,
    /// the lag rounded to the nearest ms (halves away from zero), saturating.
    public var peerAt: WallTime {
        let micros = lag.microseconds
        let lagMillis = micros / 1000 + (abs(micros % 1000) >= 500 ? (micros < 0 ? -1 : 1) : 0)
        return .milliseconds(sinceEpoch: atMilliseconds.clampedAdding(lagMillis))
    }
}
