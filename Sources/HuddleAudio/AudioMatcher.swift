/// The outcome of comparing two nodes' ``AudioFeatures``: how much later B heard the same sound
/// than A, and how sure that is.
///
/// `offset` is set only when the match is reliable (confidence and margin over their
/// thresholds, enough loud sound in common); otherwise `verdict` says why not and the numbers
/// say how close it came. A weak match is no match: "not enough sound yet", never a guess.
///
/// ```swift
/// let match = AudioMatcher().match(alice, bob)
/// if let offset = match.offset { print("bob is \(offset) s behind alice") }   // 3.2
/// ```
public struct AudioMatch: Sendable, Equatable {
    public enum Verdict: String, Sendable {
        /// A single clear peak: `offset` is B's lag.
        case aligned
        /// Too little loud sound in common at any lag, or a peak that does not stand out.
        case notEnoughSound = "not enough sound"
        /// Two or more lags fit about as well (a loop in the music, a repeated jingle).
        case ambiguous
    }

    public var verdict: Verdict
    /// Seconds B heard the sound after A (on their own clocks); nil unless `verdict` is aligned.
    public var offset: Double? { verdict == .aligned ? bestLag : nil }
    /// The best lag found, reliable or not (nil when nothing could be compared).
    public var bestLag: Double?
    /// The best lag's standard score against every other lag searched.
    public var confidence: Double
    /// How far (in the same standard units) the best lag stands above the best rival more than
    /// half a second away.
    public var margin: Double
    /// Seconds of loud sound compared at the best lag.
    public var overlap: Double
    /// At the best lag, the share of bits that agree beyond chance: 1 − 2·(differing bits)/(bits
    /// compared); 1 for identical sound, about 0 for unrelated sound.
    public var agreement: Double

    public init(verdict: Verdict, bestLag: Double?, confidence: Double, margin: Double, overlap: Double,
                agreement: Double = 0) {
        self.verdict = verdict
        self.bestLag = bestLag
        self.confidence = confidence
        self.margin = margin
        self.overlap = overlap
        self.agreement = agreement
    }
}

/// Finds the lag between two nodes' ``AudioFeatures`` anywhere within ±`maxLag` seconds: for
/// every lag (10 ms steps) the share of sub-fingerprint bits that agree over the frames both
/// heard loud, scaled by √frames so that every lag's score has the same spread when nothing
/// matches; the best lag's standard score against all the others is the confidence. The peak
/// is then placed between frames by fitting a triangle (the agreement falls off linearly
/// within a frame). Pure and deterministic: the same features give the same match on every node.
///
/// The thresholds were chosen from the bench's false-match trials (docs/AUDIO.md):
/// over a few hundred unrelated pairs the highest confidence seen was well under
/// `threshold`, and true matches with 10 s of sound are far above it.
public struct AudioMatcher: Sendable {
    /// The largest lag searched, either way (seconds).
    public var maxLag: Double
    /// Seconds of loud sound both must have heard at a lag for it to count.
    public var minOverlap: Double
    /// The standard score the peak needs.
    public var threshold: Double
    /// How far the peak must stand above any rival half a second or more away.
    public var minMargin: Double

    public init(maxLag: Double = 120, minOverlap: Double = 3, threshold: Double = 9, minMargin: Double = 3) {
        self.maxLag = maxLag
        self.minOverlap = minOverlap
        self.threshold = threshold
        self.minMargin = minMargin
    }

    /// Compares A and B; a positive offset means B heard the same sound later (B is behind A).
    public func match(_ a: AudioFeatures, _ b: AudioFeatures) -> AudioMatch {
        let hop = Double(AudioFeatures.hopMilliseconds)
        let startDifference = Double(b.start - a.start)  // ms
        // Lag L (frames): B's frame i + L is compared with A's frame i; B's clock then reads
        // startDifference + L·hop ms more than A's for the same sound.
        let lowest = Int(((-maxLag * 1000 - startDifference) / hop).rounded(.up))
        let highest = Int(((maxLag * 1000 - startDifference) / hop).rounded(.down))
        let from = max(lowest, -(a.count - 1)), to = min(highest, b.count - 1)
        let minimumFrames = Int(minOverlap * Double(AudioFeatures.framesPerSecond))
        guard from <= to else { return AudioMatch(verdict: .notEnoughSound, bestLag: nil, confidence: 0, margin: 0, overlap: 0) }

        let packedA = a.packed, packedB = b.packed
        var agreement = [Double](repeating: .nan, count: to - from + 1)  // share of agreeing bits, −1…1
        var frames = [Int](repeating: 0, count: to - from + 1)
        packedA.withUnsafeBufferPointer { pa in
            packedB.withUnsafeBufferPointer { pb in
                for lag in from...to {
                    let first = max(0, -lag), last = min(pa.count, pb.count - lag)
                    guard first < last else { continue }
                    var differing = 0, both = 0
                    for i in first..<last {
                        let x = pa[i], y = pb[i + lag]
                        let loud = Int(truncatingIfNeeded: (x & y) >> 32)  // 1 when both frames are loud
                        both &+= loud
                        differing &+= UInt32(truncatingIfNeeded: x ^ y).nonzeroBitCount &* loud
                    }
                    frames[lag - from] = both
                    if both > 0 { agreement[lag - from] = 1 - 2 * Double(differing) / Double(32 * both) }
                }
            }
        }
        // Scores: agreement·√frames, the same spread at every lag when the sounds are unrelated.
        var best = -1
        var scores = [Double](repeating: .nan, count: agreement.count)
        for index in agreement.indices where frames[index] >= minimumFrames {
            scores[index] = agreement[index] * Double(frames[index]).squareRoot()
            if best < 0 || scores[index] > scores[best] { best = index }
        }
        guard best >= 0 else {
            let most = frames.max() ?? 0
            return AudioMatch(verdict: .notEnoughSound, bestLag: nil, confidence: 0, margin: 0,
                              overlap: Double(most) / Double(AudioFeatures.framesPerSecond))
        }
        // The rest: every other lag's score, away from the peak's own shoulders (±100 ms).
        var sum = 0.0, sumSquares = 0.0, count = 0.0, rival = -Double.infinity
        for index in scores.indices where !scores[index].isNaN && abs(index - best) > 10 {
            sum += scores[index]
            sumSquares += scores[index] * scores[index]
            count += 1
            if abs(index - best) > 50 { rival = max(rival, scores[index]) }
        }
        let mean = count > 0 ? sum / count : 0
        let spread = count > 1 ? max((sumSquares / count - mean * mean).squareRoot(), 1e-9) : .infinity
        let confidence = (scores[best] - mean) / spread
        let margin = rival.isFinite ? (scores[best] - rival) / spread : confidence

        // Between frames: a triangle through the peak and its neighbours.
        var fraction = 0.0
        if best > 0, best + 1 < agreement.count, !agreement[best - 1].isNaN, !agreement[best + 1].isNaN {
            let left = agreement[best - 1], peak = agreement[best], right = agreement[best + 1]
            let fall = right >= left ? peak - left : peak - right
            if fall > 0 { fraction = max(-0.5, min(0.5, (right - left) / (2 * fall))) }
        }
        let lag = (startDifference + (Double(best + from) + fraction) * hop) / 1000
        let overlap = Double(frames[best]) / Double(AudioFeatures.framesPerSecond)
        let verdict: AudioMatch.Verdict =
            confidence < threshold ? .notEnoughSound : margin < minMargin ? .ambiguous : .aligned
        return AudioMatch(verdict: verdict, bestLag: lag, confidence: confidence, margin: margin, overlap: overlap,
                          agreement: agreement[best])
    }
}

extension AudioFeatures {
    /// Each frame's bits in the low 32 bits and its loudness in bit 32.
    var packed: [UInt64] {
        zip(bits, loud).map { UInt64($0) | ($1 ? 1 << 32 : 0) }
    }
}
