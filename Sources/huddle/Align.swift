import ArgumentParser
import Foundation
import HuddleAudio
import HuddleCore
import HuddleNode

extension Huddle {
    /// `huddle align A.wav B.wav`: how far apart two recordings of one broadcast are, from their
    /// sound alone, exactly as nodes that listen will work it out.
    struct Align: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Find how far behind (or ahead of) recording A recording B is, from their sound.",
            discussion: """
                Each file is turned into the features a listening node shares (32-bit \
                sub-fingerprints every 10 ms, about 412 bytes a second; what they reveal of words \
                said in the room is measured in docs/AUDIO.md) and the two are matched at every \
                lag within --max-lag. Prints \
                "B is 3.200 s behind A (confidence 23.1)", or "no reliable match" and why: a weak \
                match is never given as an offset. Files: WAV, 16-bit PCM, mono or stereo, \
                8-48 kHz (sox IN -b 16 OUT.wav converts most things).

                Useful to check a setup: record a minute of each screen (arecord -f S16_LE -r 48000 \
                -d 60 a.wav) and compare. With --json, one object: type "alignment", verdict \
                ("aligned", "not enough sound", "ambiguous"), offset_s (null unless aligned), \
                best_lag_s, confidence, margin, overlap_s, agreement (the share of bits that agree \
                beyond chance at the best lag), and the CPU time extraction and matching took.
                """
        )

        @Argument(help: ArgumentHelp("The first recording (the reference).", valueName: "A.wav"))
        var first: String?

        @Argument(help: ArgumentHelp("The second recording: the answer is how far it lags A.", valueName: "B.wav"))
        var second: String?

        @Option(
            name: .customLong("dump-features"),
            help: ArgumentHelp(
                "Instead of aligning: print what a peer sent this sound reads once it opens the windows, one a line in hex, in wire order: start:i64 (ms from the file's start) frames:u16, then the frames' public form (docs/PROTOCOL.md, kind 11). Every 2 s window, as a peer being placed gets them; what the bench's eavesdropping peer reads.",
                valueName: "FILE.wav"))
        var dumpFeatures: String?

        @Option(name: .long, help: ArgumentHelp("Largest lag searched, either way (default 120).", valueName: "SECONDS"))
        var maxLag: Double = 120

        @Option(name: .customLong("from"), help: ArgumentHelp("Use B only from this second on.", valueName: "SECONDS"))
        var from: Double = 0

        @Option(name: .customLong("for"), help: ArgumentHelp("Use only this many seconds of B (how little sound is enough?).", valueName: "SECONDS"))
        var length: Double?

        @Option(name: .long, help: ArgumentHelp("features (what nodes do) or xcorr (plain cross-correlation of the waveforms, the baseline).", valueName: "METHOD"))
        var method: String = "features"

        @Option(name: .long, help: ArgumentHelp("Feed the sound to the extractor in blocks of this many milliseconds, as a microphone delivers it (the same features; the CPU time is the streaming path's).", valueName: "MS"))
        var blockMs: Int?

        @Flag(name: .long, help: "Print one JSON object.")
        var json = false

        func validate() throws {
            if dumpFeatures != nil {
                guard first == nil, second == nil else {
                    throw ValidationError("--dump-features takes one file and no A.wav B.wav")
                }
                return
            }
            guard first != nil, second != nil else { throw ValidationError("give two recordings: huddle align A.wav B.wav") }
            guard maxLag > 0, maxLag <= 600 else { throw ValidationError("--max-lag must be between 0 and 600 seconds") }
            guard from >= 0 else { throw ValidationError("--from cannot be negative") }
            if let length, length <= 0 { throw ValidationError("--for must be a positive number of seconds") }
            guard ["features", "xcorr"].contains(method) else { throw ValidationError("--method must be features or xcorr") }
            if let blockMs, blockMs <= 0 || blockMs > 10_000 { throw ValidationError("--block-ms must be between 1 and 10000") }
        }

        func run() throws {
            if let dumpFeatures { return try Self.dump(dumpFeatures) }
            guard let first, let second else { return }  // validate() saw to it
            let a = try Self.read(first)
            var b = try Self.read(second)
            let skip = min(b.samples.count, Int(from * Double(b.sampleRate)))
            let keep = length.map { min(b.samples.count - skip, Int($0 * Double(b.sampleRate))) } ?? (b.samples.count - skip)
            b.samples = Array(b.samples[skip..<skip + keep])
            // B's clock: its first kept sample was heard `from` seconds after its file began.
            let bStart = Int64((Double(skip) / Double(b.sampleRate) * 1000).rounded())

            let match: AudioMatch
            var fields: [(String, Any)] = []
            if method == "xcorr" {
                let started = ThreadCPUTime.now
                var found = CrossCorrelationBaseline.match(a, b, maxLag: maxLag)
                found.bestLag = found.bestLag.map { $0 + Double(bStart) / 1000 }
                match = found
                fields.append(("match_cpu_ms", ThreadCPUTime.now - started))
            } else {
                var started = ThreadCPUTime.now
                let featuresA = try Self.features(of: a, start: 0, blockMs: blockMs)
                let extractA = ThreadCPUTime.now - started
                started = ThreadCPUTime.now
                let featuresB = try Self.features(of: b, start: bStart, blockMs: blockMs)
                let extractB = ThreadCPUTime.now - started
                started = ThreadCPUTime.now
                match = AudioMatcher(maxLag: maxLag).match(featuresA, featuresB)
                fields += [
                    ("extract_cpu_ms", ["a": extractA, "b": extractB]), ("match_cpu_ms", ThreadCPUTime.now - started),
                    ("feature_bytes", ["a": featuresA.encoded().count, "b": featuresB.encoded().count]),
                    ("feature_bytes_per_s", AudioFeatures.bytesPerSecond),
                ]
            }
            let nameA = (first as NSString).lastPathComponent, nameB = (second as NSString).lastPathComponent
            if json {
                var object: [String: Any] = [
                    "type": "alignment", "a": first, "b": second, "method": method, "verdict": match.verdict.rawValue,
                    "offset_s": match.offset.map { $0 as Any } ?? NSNull(), "best_lag_s": match.bestLag.map { $0 as Any } ?? NSNull(),
                    "confidence": match.confidence, "margin": match.margin, "overlap_s": match.overlap,
                    "agreement": match.agreement,
                    "a_seconds": a.duration, "b_seconds": b.duration,
                ]
                for (key, value) in fields { object[key] = value }
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
                print(String(decoding: data, as: UTF8.self))
                return
            }
            let confidence = String(format: "%.1f", match.confidence)
            if let offset = match.offset {
                let side = offset >= 0 ? "behind" : "ahead of"
                print("\(nameB) is \(String(format: "%.3f", abs(offset))) s \(side) \(nameA) (confidence \(confidence))")
            } else {
                let best = match.bestLag.map { String(format: "; best guess %+.3f s at confidence %@, not used", $0, confidence) } ?? ""
                let why = match.verdict == .ambiguous ? "ambiguous: more than one lag fits" : "not enough sound"
                print("no reliable match (\(why)\(best))")
            }
        }

        /// `--dump-features`: the sound windows a listening node sends a peer it is placing, made
        /// as the node makes them (the extractor fed 10 ms blocks, cut every
        /// ``Listener/defaultWindowSeconds``, the last window shorter), as the peer reads them
        /// once opened: start, frame count and the frames' public form, one window a line in hex.
        static func dump(_ path: String) throws {
            let audio = try read(path)
            let features = try features(of: audio, start: 0, blockMs: 10)
            let sender = NodeIdentity.generate().id
            let perWindow = Int(Listener.defaultWindowSeconds * Double(AudioFeatures.framesPerSecond))
            for first in stride(from: 0, to: features.bits.count, by: perWindow) {
                let end = min(first + perWindow, features.bits.count)
                let start = WallTime.milliseconds(sinceEpoch: features.start + Int64(first) * AudioFeatures.hopMilliseconds)
                let window = SoundWindow.unsealed(
                    by: sender, room: "superbowl",
                    sentAt: start + .milliseconds(Int64(end - first) * AudioFeatures.hopMilliseconds),
                    start: start, bits: Array(features.bits[first..<end]), loud: Array(features.loud[first..<end]))
                print(window.openedForm.map { String(format: "%02x", $0) }.joined())
            }
        }

        /// The features of `audio`, in one go or fed block by block as a sound card would.
        static func features(of audio: PCMAudio, start: Int64, blockMs: Int?) throws -> AudioFeatures {
            guard let blockMs else { return try AudioFeatureExtractor.features(of: audio, start: start) }
            var extractor = try AudioFeatureExtractor(sampleRate: audio.sampleRate)
            let block = max(1, audio.sampleRate * blockMs / 1000)
            var bits: [UInt32] = [], loud: [Bool] = []
            var at = 0
            while at < audio.samples.count {
                let (more, moreLoud) = extractor.append(Array(audio.samples[at..<min(at + block, audio.samples.count)]))
                bits += more
                loud += moreLoud
                at += block
            }
            return AudioFeatures(start: start + extractor.firstFrameOffset, bits: bits, loud: loud)
        }

        /// The file's samples, or a failure that says what is wrong with it.
        static func read(_ path: String) throws -> PCMAudio {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw CommandFailure("\(path): there is no such file")
            }
            guard !isDirectory.boolValue else { throw CommandFailure("\(path): that is a directory, not a WAV file") }
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CommandFailure("\(path): cannot read it (check its permissions)")
            }
            do {
                return try PCMAudio(wav: Array(data))
            } catch {
                throw CommandFailure("\(path): \(error.description)")
            }
        }
    }
}

/// This thread's CPU time in milliseconds: what the work cost, whatever else the machine does.
enum ThreadCPUTime {
    static var now: Double {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) * 1000 + Double(spec.tv_nsec) / 1e6
    }
}
