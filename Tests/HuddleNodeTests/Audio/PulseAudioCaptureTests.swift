#if os(Linux)
import Foundation
import HuddleAudio
import HuddleCore
import Testing

@testable import HuddleNode

/// A private PulseAudio server for one test: a null sink on a socket of its own, in a temporary
/// directory (never the user's or a system server, nothing on the network), stopped at the end.
final class PulseAudioBed {
    let directory: URL
    let server: String
    let process: Process
    static let sink = "huddle_test"

    /// Why no bed can start here, or nil when one can (checked once, by starting one).
    /// Whether this run said sound tests may be skipped (`Scripts/test --without sound`).
    static let mayBeSkipped =
        (ProcessInfo.processInfo.environment["HUDDLE_TEST_WITHOUT"] ?? "").split(separator: ",").contains("sound")

    static let whyNot: String? = {
        do {
            let bed = try PulseAudioBed()
            bed.stop()
            return nil
        } catch {
            return "\(error)"
        }
    }()

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init() throws {
        guard let pulseaudio = Self.which("pulseaudio") else {
            throw Failure(description: "no pulseaudio binary (Debian: pulseaudio, pulseaudio-utils)")
        }
        guard Self.which("paplay") != nil else { throw Failure(description: "no paplay (Debian: pulseaudio-utils)") }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("huddle-pa-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let socket = directory.appendingPathComponent("native").path
        server = "unix:" + socket
        process = Process()
        process.executableURL = URL(fileURLWithPath: pulseaudio)
        process.arguments = [
            "--daemonize=no", "-n", "--exit-idle-time=-1", "--disallow-exit", "--use-pid-file=no",
            "--load=module-null-sink sink_name=\(Self.sink)",
            "--load=module-native-protocol-unix socket=\(socket) auth-anonymous=1",
        ]
        process.environment = ["HOME": directory.path, "XDG_RUNTIME_DIR": directory.path, "PATH": "/usr/bin:/bin"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(5)
        while !FileManager.default.fileExists(atPath: socket) {
            guard process.isRunning, Date() < deadline else {
                stop()
                throw Failure(description: "pulseaudio did not start (no socket within 5 s)")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Plays `path` into the null sink with paplay; returns when paplay has started.
    func play(_ path: String) throws -> Process {
        let player = Process()
        player.executableURL = URL(fileURLWithPath: Self.which("paplay")!)
        player.arguments = ["--server=\(server)", "--device=\(Self.sink)", path]
        player.environment = ["HOME": directory.path, "XDG_RUNTIME_DIR": directory.path]
        try player.run()
        return player
    }

    /// Stops the server (SIGTERM; it exits on its own, nothing waits for it here) and removes
    /// its directory.
    func stop() {
        kill(process.processIdentifier, SIGTERM)
        try? FileManager.default.removeItem(at: directory)
    }

    static func which(_ name: String) -> String? {
        ["/usr/bin", "/bin", "/usr/local/bin"].map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// `--listen` through the real capture path: PulseAudio's simple API recording a null sink's
/// monitor while paplay plays a broadcast into it.
@Suite(.serialized) struct PulseAudioCaptureTests {
    @Test func noSoundServerIsOneClearLine() {
        let socket = "unix:/tmp/huddle-no-such-server-\(UUID().uuidString.prefix(8))"
        #expect(throws: AudioSourceError(
            "no sound server answers at \(socket) (PulseAudio or PipeWire: Connection refused); start one",
            consoleHint: "or use --audio-file"))
        {
            _ = try PulseAudioSource(server: socket)
        }
    }

    // Skipped only when the run said it may be (`Scripts/test --without sound`): elsewhere a
    // machine with no sound server fails here, saying what to install.
    @Test(.enabled(if: PulseAudioBed.whyNot == nil || !PulseAudioBed.mayBeSkipped, Comment(rawValue: "skipped by --without sound: \(PulseAudioBed.whyNot ?? "")")))
    func theMonitorOfANullSinkIsHeardAsTheFilePlayedIntoIt() async throws {
        if let whyNot = PulseAudioBed.whyNot {
            Issue.record("no sound server can start here: \(whyNot). Scripts/bootstrap --test installs pulseaudio and pulseaudio-utils (or run Scripts/test --without sound)")
            return
        }
        let bed = try PulseAudioBed()
        defer { bed.stop() }
        #expect(throws: AudioSourceError.self) { _ = try PulseAudioSource(server: bed.server, device: "no_such_source") }

        let broadcast = TestSound.broadcast(seconds: 8)
        let path = try TestSound.wavFile(broadcast)
        let source = try PulseAudioSource(server: bed.server, device: PulseAudioBed.sink + ".monitor")
        let listener = Listener(source: source)
        let clock = SystemListeningClock()
        try await Task.sleep(for: .milliseconds(300))
        let playedAt = clock.wall().millisecondsSinceEpoch
        let player = try bed.play(path)
        // A monitor delivers nothing once nothing plays, so the listener is not waited for: its
        // outputs are collected until the file has played and a little more.
        let collector = Task {
            var outputs: [Listener.Output] = []
            for await output in listener.outputs { outputs.append(output) }
            return outputs
        }
        // paplay takes a moment to connect, then plays 8 s in real time.
        try await Task.sleep(for: .seconds(11))
        listener.stop()
        collector.cancel()
        let outputs = await collector.value
        kill(player.processIdentifier, SIGTERM)
        #expect(outputs.first.map { if case .started(.device, _) = $0 { true } else { false } } == true)
        let heard = try #require(TestSound.joined(outputs))
        let played = try AudioFeatureExtractor.features(of: PCMAudio(sampleRate: 16_000, samples: broadcast), start: playedAt)
        let found = PairMatch.run(own: played, peer: heard, peerID: NodeID(bytes: [UInt8](repeating: 9, count: 32))!,
                                  centre: 0, reach: 120)
        let match = try #require(found.heard, "the monitor's sound does not match the file: \(found.match)")
        // paplay takes a moment to start (about 2 s here: it looks for a session bus first) and the
        // server buffers: the monitor hears the file after paplay was started, never before.
        #expect(match.lag > .milliseconds(-50) && match.lag < .seconds(5), "heard \(match.lag) after playing")
        #expect(match.confidence >= 9)
        #expect(found.match.overlap >= 5, "\(found.match.overlap) s of the 8 s compared")
        print("capture: heard \(match.lag.microseconds / 1000) ms after paplay started, confidence \(match.confidence)")
    }
}
#endif
