import Foundation
import HuddleAudio
import HuddleCore
import Synchronization

@testable import HuddleNode

/// A clock that never waits: sleeping moves it to the deadline, so a source paced by it runs as
/// fast as the machine can, with the times a real one would have.
final class SteppingClock: ListeningClock {
    private let now: Mutex<WallTime>
    init(_ start: WallTime) { now = Mutex(start) }
    func wall() -> WallTime { now.withLock { $0 } }
    func sleep(until deadline: WallTime) { now.withLock { $0 = max($0, deadline) } }
}

/// Test sound made here: a "broadcast" of noise bursts whose loudness changes every 50–300 ms
/// (what fingerprints latch on to), seeded so every run hears the same game.
enum TestSound {
    static func broadcast(seconds: Double, rate: Int = 16_000, seed: UInt64 = 7) -> [Float] {
        var rng = SplitMix64(seed: seed)
        var samples: [Float] = []
        samples.reserveCapacity(Int(seconds * Double(rate)))
        while samples.count < Int(seconds * Double(rate)) {
            let length = Int(Double(rate) * (0.05 + Double(rng.next() % 250) / 1000))
            let gain = Float(0.05 + Double(rng.next() % 900) / 1000 * 0.5)
            let tone = Double(200 + rng.next() % 3000)
            for i in 0..<length {
                let noise = Float(Int64(rng.next() % 2001) - 1000) / 1000
                let hum = Float(sin(2 * Double.pi * tone * Double(samples.count + i) / Double(rate)))
                samples.append(gain * (0.7 * noise + 0.3 * hum))
            }
        }
        return Array(samples.prefix(Int(seconds * Double(rate))))
    }

    /// Writes `samples` as a 16-bit WAV into a fresh temporary file; returns its path.
    static func wavFile(_ samples: [Float], rate: Int = 16_000, name: String = "sound.wav") throws -> String {
        try file(PCMAudio(sampleRate: rate, samples: samples).wavBytes(), name: name)
    }

    static func file(_ bytes: [UInt8], name: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("huddle-audio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    /// Every output of a listener until it stops. A file source always stops (the stream ends
    /// with the file), so there is no deadline: one here broke off after `.started` in CI, where
    /// the test's task was not scheduled for a minute while the whole suite ran on two cores.
    static func collect(_ listener: Listener) async -> [Listener.Output] {
        var outputs: [Listener.Output] = []
        for await output in listener.outputs {
            outputs.append(output)
            if case .stopped = output { break }
        }
        return outputs
    }

    /// The windows of `outputs` joined into one stretch of features.
    static func joined(_ outputs: [Listener.Output]) -> AudioFeatures? {
        var timeline = FeatureTimeline(seconds: 600)
        for case .window(let features) in outputs { timeline.add(features) }
        return timeline.count > 0 ? timeline.features : nil
    }
}
