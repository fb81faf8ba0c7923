import HuddleAudio
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Features and matching on signals made from a seed: a delayed copy is found to within a few
/// milliseconds, and unrelated sound, or none, is refused.
@Suite struct AudioMatcherTests {
    /// Sound-like noise: every 40 ms a new loudness and a new tilt of its spectrum (a one-pole
    /// filter), so band energies move the way speech and crowds make them move.
    static func programme(seconds: Double, rate: Int = 8_000, seed: UInt64) -> [Float] {
        var random = TestRandom(seed: seed)
        let segment = rate / 25
        var out: [Float] = []
        out.reserveCapacity(Int(seconds * Double(rate)))
        var state = 0.0
        while out.count < Int(seconds * Double(rate)) {
            let gain = 0.05 + 0.25 * (random.uniform() + 1) / 2
            let pole = 0.9 * random.uniform()
            for _ in 0..<segment {
                state = pole * state + random.uniform()
                out.append(Float(gain * state * (1 - abs(pole)) * 0.8))
            }
        }
        return out
    }

    /// `source` delayed by `delay` seconds (whole samples), cut to `seconds`, with white noise
    /// at `snr` dB below it.
    static func heard(_ source: [Float], rate: Int = 8_000, delay: Double, seconds: Double, snr: Double, seed: UInt64)
        -> [Float]
    {
        var random = TestRandom(seed: seed)
        let shift = Int((delay * Double(rate)).rounded())
        let count = Int(seconds * Double(rate))
        let signal = (0..<count).map { $0 - shift >= 0 && $0 - shift < source.count ? source[$0 - shift] : 0 }
        let power = signal.reduce(0) { $0 + Double($1 * $1) } / Double(count)
        let noise = (power / pow(10, snr / 10) * 3).squareRoot()  // uniform(-1,1) has variance 1/3
        return signal.map { $0 + Float(noise * random.uniform()) }
    }

    static func features(_ samples: [Float], rate: Int = 8_000, start: Int64 = 0) throws -> AudioFeatures {
        try AudioFeatureExtractor.features(of: PCMAudio(sampleRate: rate, samples: samples), start: start)
    }

    @Test func featuresAreDeterministicAndTheSameInBlocks() throws {
        let samples = Self.programme(seconds: 5, rate: 16_000, seed: 1)
        let once = try Self.features(samples, rate: 16_000)
        #expect(once == (try Self.features(samples, rate: 16_000)))
        var extractor = try AudioFeatureExtractor(sampleRate: 16_000)
        var bits: [UInt32] = [], loud: [Bool] = []
        var at = 0, size = 1
        while at < samples.count {  // uneven blocks, as a sound card delivers them
            let block = Array(samples[at..<min(samples.count, at + size)])
            let (moreBits, moreLoud) = extractor.append(block)
            bits += moreBits
            loud += moreLoud
            at += size
            size = size * 3 % 2_000 + 7
        }
        #expect(bits == once.bits && loud == once.loud)
        // One frame a 10 ms, less the first and the last 64 ms window's worth and the resampler's look-ahead.
        #expect((490...494).contains(once.count))
        #expect(once.loud.allSatisfy { $0 })
    }

    @Test func featuresFitTheBudgetAndRoundTrip() throws {
        let features = try Self.features(Self.programme(seconds: 10, seed: 2), start: 1_700_000_000_123)
        #expect(AudioFeatures.bytesPerSecond <= 1_024)
        let bytes = features.encoded()
        #expect(Double(bytes.count) / features.duration <= Double(AudioFeatures.bytesPerSecond) + 2)
        #expect(AudioFeatures(encoded: bytes) == features)
        #expect(AudioFeatures(encoded: Array(bytes.dropLast())) == nil)
    }

    @Test func quietFramesAreNotLoudAndCarryNoBits() throws {
        let silence = try Self.features([Float](repeating: 0, count: 8_000 * 5))
        #expect(silence.loud.allSatisfy { !$0 })
        // A room at −80 dBFS: noise, but below the floor; its bits are not kept.
        let hiss = try Self.features(Self.programme(seconds: 5, seed: 20).map { $0 * 0.000_1 })
        #expect(hiss.loud.allSatisfy { !$0 })
        #expect(hiss.bits.allSatisfy { $0 == 0 })
    }

    @Test(arguments: [(3.217, 20.0), (-41.5, 10.0), (88.004, 5.0)])
    func findsADelayedCopy(delay: Double, snr: Double) throws {
        let source = Self.programme(seconds: 130, seed: 3)
        let a = Self.heard(source, delay: 10, seconds: 110, snr: 30, seed: 4)
        let b = Self.heard(source, delay: 10 + delay, seconds: 110, snr: snr, seed: 5)
        let match = AudioMatcher().match(try Self.features(a), try Self.features(b))
        let offset = try #require(match.offset, "\(match)")
        #expect(abs(offset - delay) < 0.005, "\(match)")
        #expect(match.confidence > 20)
        #expect(match.agreement > 0.2 && match.agreement < 1)
    }

    @Test func countsTheClocksStartTimes() throws {
        let source = Self.programme(seconds: 40, seed: 6)
        let a = try Self.features(source, start: 1_000_000)
        // B started listening 2.5 s after A (its clock), and its stream is 1.25 s behind.
        let b = try Self.features(Self.heard(source, delay: 1.25 - 2.5, seconds: 30, snr: 20, seed: 7), start: 1_002_500)
        let offset = try #require(AudioMatcher().match(a, b).offset)
        #expect(abs(offset - 1.25) < 0.005)
    }

    @Test func acrossSampleRates() throws {
        let source = Self.programme(seconds: 30, rate: 16_000, seed: 8)
        let a = try Self.features(source, rate: 16_000)
        let b = try Self.features(Self.heard(source, rate: 16_000, delay: 2.0004, seconds: 30, snr: 20, seed: 9), rate: 16_000)
        let offset = try #require(AudioMatcher().match(a, b).offset)
        #expect(abs(offset - 2.0004) < 0.005)
    }

    @Test func refusesNoiseAgainstNoise() throws {
        for seed in UInt64(10)..<UInt64(13) {
            let a = try Self.features(Self.programme(seconds: 40, seed: seed))
            let b = try Self.features(Self.programme(seconds: 40, seed: seed + 100))
            let match = AudioMatcher().match(a, b)
            #expect(match.offset == nil, "\(match)")
            #expect(match.confidence < AudioMatcher().threshold)
        }
    }

    @Test func refusesSilenceAndTooLittleSound() throws {
        let silence = try Self.features([Float](repeating: 0, count: 8_000 * 30))
        let sound = try Self.features(Self.programme(seconds: 30, seed: 17))
        for match in [AudioMatcher().match(silence, silence), AudioMatcher().match(sound, silence)] {
            #expect(match.verdict == .notEnoughSound)
            #expect(match.bestLag == nil)
        }
        // Two seconds in common is below the three the matcher asks for.
        let short = try Self.features(Array(Self.programme(seconds: 30, seed: 17).prefix(16_000)))
        #expect(AudioMatcher().match(sound, short).offset == nil)
    }

    @Test func aRepeatingLoopIsAmbiguous() throws {
        let loop = Self.programme(seconds: 4, seed: 18)
        let a = try Self.features(Array(repeating: loop, count: 10).flatMap { $0 })
        let b = try Self.features(Self.heard(Array(repeating: loop, count: 10).flatMap { $0 }, delay: 1, seconds: 40,
                                             snr: 20, seed: 19))
        let match = AudioMatcher().match(a, b)
        #expect(match.verdict == .ambiguous, "\(match)")
        #expect(match.offset == nil)
    }
}
