import Foundation
public import HuddleAudio
public import HuddleCore
import Synchronization

/// Turns what an ``AudioSource`` hears into feature windows on a thread of its own (never on the
/// node's actor: the extractor's FFTs must not delay chat), and hands them out through
/// ``outputs``: first `.started` with the node-clock time the first sample counts as heard, then
/// a `.window` every ``windowSeconds`` of sound, `.stopped` at the end.
///
/// ```swift
/// let listener = Listener(source: try WAVFileSource(path: "alice.wav", start: now))
/// for await output in listener.outputs {
///     if case .window(let features) = output { share(features) }
/// }
/// ```
public final class Listener: Sendable {
    /// What the listener reports.
    public enum Output: Sendable, Equatable {
        /// Listening began: the kind of source and the node-clock time (ms) its first sample
        /// counts as heard (`{"type":"listening","source":…,"started_at":…}`).
        case started(source: AudioSourceKind, at: WallTime)
        /// The features of the next stretch of sound, on the node's clock.
        case window(AudioFeatures)
        /// Listening ended: `nil` when the source ran out (a file played to its end), else why.
        case stopped(reason: String?)
    }

    public let outputs: AsyncStream<Output>
    /// Seconds of sound per window.
    public let windowSeconds: Double
    private let source: any AudioSource
    private let done = Mutex(false)

    /// Seconds of sound in each window a node shares.
    public static let defaultWindowSeconds = 2.0

    /// Starts listening at once, on a new thread.
    public init(source: any AudioSource, windowSeconds: Double = defaultWindowSeconds) {
        self.source = source
        self.windowSeconds = windowSeconds
        let (stream, continuation) = AsyncStream.makeStream(of: Output.self, bufferingPolicy: .bufferingNewest(256))
        outputs = stream
        let frames = max(1, Int(windowSeconds * Double(AudioFeatures.framesPerSecond)))
        let thread = Thread { [source] in
            Self.run(source: source, windowFrames: frames, continuation: continuation)
        }
        thread.name = "huddle-listener"
        thread.start()
        continuation.onTermination = { _ in source.close() }
    }

    /// Stops listening; the stream ends with `.stopped(reason: nil)` soon after.
    public func stop() {
        source.close()
    }

    private static func run(source: any AudioSource, windowFrames: Int, continuation: AsyncStream<Output>.Continuation) {
        defer { continuation.finish() }
        var extractor: AudioFeatureExtractor
        do {
            extractor = try AudioFeatureExtractor(sampleRate: source.sampleRate)
        } catch {
            continuation.yield(.stopped(reason: error.description))
            return
        }
        var start: Int64?  // ms of the next window's first frame, as features count
        var expected: WallTime?  // when the next block should start, if the sound runs on
        var bits: [UInt32] = []
        var loud: [Bool] = []
        do {
            while let block = try source.nextBlock() {
                if start == nil {
                    continuation.yield(.started(source: source.kind, at: block.at))
                    start = block.at.millisecondsSinceEpoch + extractor.firstFrameOffset
                } else if let expected, (block.at - expected).magnitude > .milliseconds(20), let begun = start {
                    // The source stalled or skipped: what is done goes out, and a new stretch
                    // starts at the block's own time (frames compare only sound that runs on).
                    if !bits.isEmpty { continuation.yield(.window(AudioFeatures(start: begun, bits: bits, loud: loud))) }
                    (bits, loud) = ([], [])
                    extractor = try AudioFeatureExtractor(sampleRate: source.sampleRate)
                    start = block.at.millisecondsSinceEpoch + extractor.firstFrameOffset
                }
                // Whole µs, rounded down, as sample counts go.
                expected = block.at + .microseconds(Int64(block.samples.count) * 1_000_000 / Int64(source.sampleRate))
                let (newBits, newLoud) = extractor.append(block.samples)
                bits += newBits
                loud += newLoud
                while bits.count >= windowFrames {
                    continuation.yield(
                        .window(AudioFeatures(start: start!, bits: Array(bits[..<windowFrames]), loud: Array(loud[..<windowFrames]))))
                    bits.removeFirst(windowFrames)
                    loud.removeFirst(windowFrames)
                    start! += Int64(windowFrames) * AudioFeatures.hopMilliseconds
                }
            }
            if let start, !bits.isEmpty { continuation.yield(.window(AudioFeatures(start: start, bits: bits, loud: loud))) }
            continuation.yield(.stopped(reason: nil))
        } catch {
            continuation.yield(.stopped(reason: "\(error)"))
        }
    }
}
