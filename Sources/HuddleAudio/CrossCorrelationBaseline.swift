/// The plain way, kept as the bench's baseline: cross-correlate the two waveforms (both
/// resampled to 4 kHz) with one FFT, take the highest peak within ±maxLag and its standard
/// score against every other lag. Needs the raw sound of both sides in one place, so it is not
/// something nodes could do without sharing audio; it is here to measure the features against.
///
/// ```swift
/// let match = CrossCorrelationBaseline.match(alice, bob, maxLag: 120)
/// ```
public enum CrossCorrelationBaseline {
    /// The rate both waveforms are correlated at.
    public static let rate = 4_000

    /// Same conventions as ``AudioMatcher/match(_:_:)``: a positive lag means B heard it later.
    /// `threshold` and `minMargin` play the same roles, on this correlation's scores.
    public static func match(_ a: PCMAudio, _ b: PCMAudio, maxLag: Double = 120, minOverlap: Double = 3,
                             threshold: Double = 9, minMargin: Double = 3) -> AudioMatch {
        func downsampled(_ audio: PCMAudio) -> [Double] {
            var resampler = Resampler(from: audio.sampleRate, to: rate)
            return resampler.append(audio.samples).map(Double.init)
        }
        let x = downsampled(a), y = downsampled(b)
        let size = FFT.size(atLeast: x.count + y.count)
        let fft = FFT(size: size)
        var xr = x + [Double](repeating: 0, count: size - x.count), xi = [Double](repeating: 0, count: size)
        var yr = y + [Double](repeating: 0, count: size - y.count), yi = [Double](repeating: 0, count: size)
        fft.forward(&xr, &xi)
        fft.forward(&yr, &yi)
        // conj(X)·Y: its inverse at L is Σ x[i]·y[i + L] (L < 0 wraps to size + L).
        for k in 0..<size {
            let re = xr[k] * yr[k] + xi[k] * yi[k]
            let im = xr[k] * yi[k] - xi[k] * yr[k]
            xr[k] = re
            xi[k] = im
        }
        fft.inverse(&xr, &xi)
        let energy = (x.reduce(0) { $0 + $1 * $1 } * y.reduce(0) { $0 + $1 * $1 }).squareRoot()
        let minimum = Int(minOverlap * Double(rate))
        let limit = Int(maxLag * Double(rate))
        let from = max(-limit, -(x.count - minimum)), to = min(limit, y.count - minimum)
        guard from <= to, energy > 0 else {
            return AudioMatch(verdict: .notEnoughSound, bestLag: nil, confidence: 0, margin: 0, overlap: 0)
        }
        func score(_ lag: Int) -> Double { xr[lag >= 0 ? lag : size + lag] / energy }
        var best = from
        for lag in from...to where score(lag) > score(best) { best = lag }
        let shoulder = rate / 10, apart = rate / 2
        var sum = 0.0, sumSquares = 0.0, count = 0.0, rival = -Double.infinity
        for lag in from...to where abs(lag - best) > shoulder {
            let value = score(lag)
            sum += value
            sumSquares += value * value
            count += 1
            if abs(lag - best) > apart { rival = max(rival, value) }
        }
        let mean = count > 0 ? sum / count : 0
        let spread = count > 1 ? max((sumSquares / count - mean * mean).squareRoot(), 1e-12) : .infinity
        let confidence = (score(best) - mean) / spread
        let margin = rival.isFinite ? (score(best) - rival) / spread : confidence
        var fraction = 0.0
        if best > from, best < to {
            let left = score(best - 1), peak = score(best), right = score(best + 1)
            let curve = left - 2 * peak + right
            if curve < 0 { fraction = max(-0.5, min(0.5, 0.5 * (left - right) / curve)) }
        }
        let lag = (Double(best) + fraction) / Double(rate)
        let overlap = Double(min(x.count, y.count - best, x.count + best, y.count)) / Double(rate)
        let verdict: AudioMatch.Verdict =
            confidence < threshold ? .notEnoughSound : margin < minMargin ? .ambiguous : .aligned
        return AudioMatch(verdict: verdict, bestLag: lag, confidence: confidence, margin: margin, overlap: overlap)
    }
}
