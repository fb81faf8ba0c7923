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
/// let match = HeardMatch(peer: bob, at: 1_000_000, lagMicros: 3_198_400, confidence: 106.3)
/// match.sigmaMicros     // 8 467: 900 ms / confidence
/// ```
public struct HeardMatch: Hashable, Sendable {
    /// The other node: whose features were matched against the publisher's own.
    public var peer: NodeID
    /// Milliseconds on the publisher's clock: the middle of the sound both heard.
    public var at: Int64
    /// Microseconds the peer's clock read later than the publisher's for the same sound (the
    /// streams' lag plus the difference between the two machines' clocks); negative: earlier.
    public var lagMicros: Int64
    /// The standard deviation the publisher gives `lagMicros`, µs (see ``sigmaMicros(confidence:)``).
    public var sigmaMicros: UInt32
    /// The matcher's confidence (the peak's standard score), in tenths.
    public var confidenceTenths: UInt16

    public init(peer: NodeID, at: Int64, lagMicros: Int64, sigmaMicros: UInt32, confidenceTenths: UInt16) {
        self.peer = peer
        self.at = at
        self.lagMicros = lagMicros
        self.sigmaMicros = sigmaMicros
        self.confidenceTenths = confidenceTenths
    }

    /// A match with the uncertainty its confidence gives it (``sigmaMicros(confidence:)``).
    public init(peer: NodeID, at: Int64, lagMicros: Int64, confidence: Double) {
        let tenths = (confidence * 10).rounded()
        self.init(
            peer: peer, at: at, lagMicros: lagMicros, sigmaMicros: Self.sigmaMicros(confidence: confidence),
            confidenceTenths: tenths.isFinite ? UInt16(max(0, min(Double(UInt16.max), tenths))) : 0)
    }

    /// The matcher's confidence as a standard score.
    public var confidence: Double { Double(confidenceTenths) / 10 }

    /// The lowest confidence a match must have to count anywhere: the matcher's threshold (9).
    /// Every node applies it to every `heard` event, so a weak match is no match whoever
    /// published it.
    public static let minimumConfidenceTenths: UInt16 = 90

    /// The uncertainty a publisher gives a match of this confidence: 900 ms / confidence, at
    /// least 2 ms. At the threshold (9) that is 100 ms, half a thumb's; at 45, the lowest
    /// confidence of a correct match at 5 dB SNR on the bench, 20 ms (its p99 error target is 50
    /// ms); above 450, 2 ms. Deliberately cautious: the bench's errors are smaller (BENCHMARKS.md,
    /// part 13).
    public static func sigmaMicros(confidence: Double) -> UInt32 {
        guard confidence.isFinite, confidence > 0 else { return UInt32.max }
        let sigma = (900_000 / confidence).rounded()
        return UInt32(max(2_000, min(Double(UInt32.max), sigma)))
    }

    /// The thumb's standard deviation the solver weighs everything against: 200 ms.
    public static let tapSigmaMicros: Double = 200_000

    /// The peer's clock reading for the moment, in whole milliseconds (`at + lag`, rounded half
    /// away from zero, clamped).
    public var peerAt: Int64 {
        let lagMillis = lagMicros / 1000 + (abs(lagMicros % 1000) >= 500 ? (lagMicros < 0 ? -1 : 1) : 0)
        return at.clampedAdding(lagMillis)
    }
}
