import Foundation
import HuddleAudio
public import HuddleCore
import Synchronization

/// A WAV file played in real time from a given instant, as if the microphone heard it: the
/// source `--audio-file` uses for tests, the bench and the demo. Sample i counts as heard at
/// `start + i / rate`; block k (10 ms of samples) is handed over once its last sample has been
/// heard, paced by the clock, so a node fed from a file sees what it would from a microphone.
///
/// The file is read and checked whole when the source is made (16-bit PCM, mono or stereo,
/// 8–48 kHz, as ``PCMAudio`` reads): a file that is not a readable WAV is refused before the
/// node starts, in words.
///
/// ```swift
/// let source = try WAVFileSource(path: "bob.wav", start: clock.wall())
/// source.nextBlock()   // after 10 ms: the first 10 ms of bob.wav, at == start
/// ```
public final class WAVFileSource: AudioSource {
    public let kind = AudioSourceKind.file
    public let sampleRate: Int
    /// When, on the node's wall clock, the file's first sample counts as heard.
    public let start: WallTime
    /// The file's length, seconds.
    public let duration: Double
    private let samples: [Float]
    private let clock: any ListeningClock
    private let blockLength: Int
    private let state = Mutex((next: 0, closed: false))

    /// Reads and checks `path`; throws ``AudioSourceError`` naming the file and the problem.
    public init(
        path: String, start: WallTime, clock: any ListeningClock = SystemListeningClock()
    ) throws(AudioSourceError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "does not exist"
            throw AudioSourceError("\(path) \(reason)")
        }
        let audio: PCMAudio
        do {
            audio = try PCMAudio(wav: [UInt8](data))
        } catch {
            throw AudioSourceError("\(path) is not a WAV file Huddle can play: \(error)")
        }
        guard !audio.samples.isEmpty else { throw AudioSourceError("\(path) holds no sound (0 samples)") }
        self.sampleRate = audio.sampleRate
        self.samples = audio.samples
        self.duration = audio.duration
        self.start = start
        self.clock = clock
        self.blockLength = max(1, audio.sampleRate / 100)
    }

    public func nextBlock() throws(AudioSourceError) -> AudioBlock? {
        let first = state.withLock { state -> Int? in
            guard !state.closed, state.next < samples.count else { return nil }
            defer { state.next += blockLength }
            return state.next
        }
        guard let first else { return nil }
        let end = min(samples.count, first + blockLength)
        clock.sleep(until: time(ofSample: end))
        guard !state.withLock({ $0.closed }) else { return nil }
        return AudioBlock(samples: Array(samples[first..<end]), at: time(ofSample: first))
    }

    public func close() {
        state.withLock { $0.closed = true }
    }

    /// When sample `index` counts as heard, on the node's wall clock (whole µs, rounded down).
    func time(ofSample index: Int) -> WallTime {
        start + .microseconds(Int64(index) * 1_000_000 / Int64(sampleRate))
    }
}
