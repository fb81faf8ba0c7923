/// Turns sound, a block at a time, into ``AudioFeatures``: resample to 8 kHz, a 64 ms Hann
/// window every 10 ms, a 512-point FFT, the log energy of 33 mel-spaced bands from 300 to
/// 3,400 Hz, and 32 sign bits of how neighbouring bands' differences changed since the last
/// frame. A frame is loud when both it and the previous frame are above −65 dBFS.
///
/// Streaming: feed it what the microphone delivers; it returns the frames that are complete.
/// Frame k (counting from 0) stands for the 64 ms that start k·10 ms after the first sample.
///
/// ```swift
/// var extractor = try AudioFeatureExtractor(sampleRate: 48_000)
/// let (bits, loud) = extractor.append(block)      // about block.count / 480 frames
/// ```
public struct AudioFeatureExtractor: Sendable {
    /// The rate everything is analysed at: the band up to 3.4 kHz is what phones, TV speakers
    /// and laptop microphones all pass.
    public static let internalRate = 8_000
    static let frameLength = 512
    static let hop = 80
    static let bandCount = 33
    static let lowHz = 300.0
    static let highHz = 3_400.0
    /// Frames quieter than this (RMS, full-scale ±1) are not compared: −65 dBFS.
    static let loudnessFloor = 0.000_56

    private var resampler: Resampler
    private let fft = FFT(size: frameLength)
    private let window: [Double]
    /// For each band, the FFT bins it sums.
    private let bands: [Range<Int>]
    /// 8 kHz samples not yet fully used; pending[0] is sample `pendingStart`.
    private var pending: [Float] = []
    private var pendingStart = 0
    /// The next frame to compute.
    private var nextFrame = 0
    private var previous: (logEnergy: [Double], loud: Bool)?

    /// `sampleRate` is the input's: 8,000 to 48,000.
    public init(sampleRate: Int) throws(WAVError) {
        guard PCMAudio.supportedRates.contains(sampleRate) else {
            throw WAVError("sound at \(sampleRate) Hz: only 8,000 to 48,000 Hz can be analysed")
        }
        resampler = Resampler(from: sampleRate, to: Self.internalRate)
        let n = Self.frameLength
        window = (0..<n).map { 0.5 - 0.5 * Math.cos(2 * Double.pi * Double($0) / Double(n)) }
        func mel(_ hz: Double) -> Double { 2595 * Math.log10(1 + hz / 700) }
        func hz(_ mel: Double) -> Double { 700 * (Math.pow(10, mel / 2595) - 1) }
        let binHz = Double(Self.internalRate) / Double(n)
        let low = mel(Self.lowHz), high = mel(Self.highHz)
        let edges = (0...Self.bandCount).map { index in
            Int((hz(low + (high - low) * Double(index) / Double(Self.bandCount)) / binHz).rounded())
        }
        bands = (0..<Self.bandCount).map { edges[$0]..<max(edges[$0 + 1], edges[$0] + 1) }
    }

    /// The features of a whole recording whose first sample was heard at `start` (ms).
    public static func features(of audio: PCMAudio, start: Int64 = 0) throws(WAVError) -> AudioFeatures {
        var extractor = try AudioFeatureExtractor(sampleRate: audio.sampleRate)
        let (bits, loud) = extractor.append(audio.samples)
        return AudioFeatures(start: start + extractor.firstFrameOffset, bits: bits, loud: loud)
    }

    /// The time (ms after the first sample) that returned frame 0 stands for: the first frame
    /// needs the one before it, so frames start at the second analysis window.
    public var firstFrameOffset: Int64 { AudioFeatures.hopMilliseconds }

    /// Takes the next block of samples at the input rate; returns the frames completed by it.
    public mutating func append(_ samples: [Float]) -> (bits: [UInt32], loud: [Bool]) {
        pending += resampler.append(samples)
        var bits: [UInt32] = []
        var loud: [Bool] = []
        let n = Self.frameLength
        var re = [Double](repeating: 0, count: n)
        var im = [Double](repeating: 0, count: n)
        while nextFrame * Self.hop + n <= pendingStart + pending.count {
            let first = nextFrame * Self.hop - pendingStart
            var power = 0.0
            for i in 0..<n {
                let sample = Double(pending[first + i])
                power += sample * sample
                re[i] = sample * window[i]
                im[i] = 0
            }
            let isLoud = (power / Double(n)).squareRoot() > Self.loudnessFloor
            fft.forward(&re, &im)
            var logEnergy = [Double](repeating: 0, count: Self.bandCount)
            for (band, bins) in bands.enumerated() {
                var energy = 0.0
                for bin in bins { energy += re[bin] * re[bin] + im[bin] * im[bin] }
                logEnergy[band] = Math.log(energy / Double(bins.count) + 1e-12)
            }
            if let previous {
                var word: UInt32 = 0
                for m in 0..<32 {
                    let now = logEnergy[m] - logEnergy[m + 1]
                    let before = previous.logEnergy[m] - previous.logEnergy[m + 1]
                    if now - before > 0 { word |= 1 << UInt32(m) }
                }
                // A quiet frame is never compared, so it carries nothing: no bits from a silent room.
                let bothLoud = isLoud && previous.loud
                bits.append(bothLoud ? word : 0)
                loud.append(bothLoud)
            }
            previous = (logEnergy, isLoud)
            nextFrame += 1
        }
        let used = nextFrame * Self.hop - pendingStart
        if used > 8_192 {
            pending.removeFirst(used)
            pendingStart += used
        }
        return (bits, loud)
    }
}
