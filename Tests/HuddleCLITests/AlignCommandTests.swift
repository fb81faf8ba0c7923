import Foundation
import Testing

/// `huddle align` on files the corpus script makes (Scripts/audio-corpus): the known delays
/// are found within 20 ms, and unrelated sound, music alone and silence give no match.
// Skipped only when the run said it may be (`Scripts/test --without sound`); otherwise a machine
// without the tools fails `theCorpusToolsAreHere` with a line saying what to install.
@Suite(.enabled(if: corpusToolsPresent || !soundMayBeSkipped, "needs espeak-ng and sox; skipped by --without sound"))
struct AlignCommandTests {
    @Test func theCorpusToolsAreHere() {
        #expect(
            corpusToolsPresent,
            "huddle align's tests need espeak-ng and sox: Scripts/bootstrap --test installs them (or run Scripts/test --without sound)")
    }

    /// The demo set, 25 s a file, made once for the suite in its own temp dir (about 6 s, on a
    /// Dispatch thread: see ``OffThePool``), removed when the test process exits.
    static let corpus = Task { try await OffThePool.run { try makeCorpus() } }

    static func makeCorpus() throws -> URL {
        let directory = corpusDirectory()
        atexit { try? FileManager.default.removeItem(at: corpusDirectory()) }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let process = Process()
        process.executableURL = root.appendingPathComponent("Scripts/audio-corpus")
        process.arguments = ["--out", directory.path, "--seconds", "25", "--seed", "3"]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CorpusFailed() }
        return directory
    }

    struct CorpusFailed: Error {}

    func align(_ a: String, _ b: String) async throws -> [String: Any] {
        let directory = try await Self.corpus.value
        let result = try await HuddleBinary.run(["align", directory.appendingPathComponent(a).path,
                                                 directory.appendingPathComponent(b).path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    func truth(_ file: String) async throws -> Double {
        let manifest = try JSONSerialization.jsonObject(
            with: Data(contentsOf: try await Self.corpus.value.appendingPathComponent("manifest.json")))
        let files = (manifest as? [String: Any])?["files"] as? [String: Any] ?? [:]
        return try #require((files[file] as? [String: Any])?["delay_at_middle"] as? Double)
    }

    @Test(arguments: ["bob.wav", "carol.wav"])
    func findsTheKnownDelay(file: String) async throws {
        let match = try await align("alice.wav", file)
        let offset = try #require(match["offset_s"] as? Double, "\(match)")
        #expect(abs(offset - (try await truth(file))) < 0.020, "\(match)")
    }

    @Test func otherCommentaryOverTheSameGameIsRightOrNothing() async throws {
        let match = try await align("alice.wav", "dave-other-commentary.wav")
        if let offset = match["offset_s"] as? Double {
            #expect(abs(offset - (try await truth("dave-other-commentary.wav"))) < 0.020, "\(match)")
        }
    }

    @Test(arguments: ["erin-unrelated.wav", "music-only.wav", "silence.wav"])
    func refusesWhatIsNotTheSameBroadcast(file: String) async throws {
        let match = try await align("alice.wav", file)
        #expect(match["offset_s"] is NSNull, "\(match)")
        #expect(match["verdict"] as? String != "aligned")
    }

    @Test func saysItInWords() async throws {
        let directory = try await Self.corpus.value
        let found = try await HuddleBinary.run(["align", directory.appendingPathComponent("alice.wav").path,
                                          directory.appendingPathComponent("carol.wav").path])
        #expect(found.stdout.hasPrefix("carol.wav is 7.5"), "\(found.stdout)")
        #expect(found.stdout.contains("s behind alice.wav (confidence "))
        let ahead = try await HuddleBinary.run(["align", directory.appendingPathComponent("carol.wav").path,
                                          directory.appendingPathComponent("alice.wav").path])
        #expect(ahead.stdout.contains("s ahead of carol.wav"), "\(ahead.stdout)")
        let none = try await HuddleBinary.run(["align", directory.appendingPathComponent("alice.wav").path,
                                         directory.appendingPathComponent("silence.wav").path])
        #expect(none.stdout == "no reliable match (not enough sound)\n", "\(none.stdout)")
    }
}

private func corpusDirectory() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("huddle-align-\(getpid())")
}

/// Whether this run said sound tests may be skipped (`Scripts/test --without sound` sets
/// HUDDLE_TEST_WITHOUT=sound).
private let soundMayBeSkipped =
    (ProcessInfo.processInfo.environment["HUDDLE_TEST_WITHOUT"] ?? "").split(separator: ",").contains("sound")

private let corpusToolsPresent = ["espeak-ng", "sox"].allSatisfy { tool in
    (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
        .contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }
}
