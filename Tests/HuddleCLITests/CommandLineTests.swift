import HuddleCore
import Testing

@testable import huddle

/// The built `huddle` binary, run as a user runs it.
@Suite struct CommandLineTests {
    init() { BrokenPipes.ignored }

    @Test func versionNamesReleaseAndWireProtocol() async throws {
        let result = try await HuddleBinary.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("huddle 0."))
        #expect(result.stdout.contains("wire protocol \(WireProtocol.version)"))
    }

    @Test func helpExplainsWhatHuddleIs() async throws {
        let result = try await HuddleBinary.run(["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("USAGE: huddle"))
        #expect(result.stdout.contains("friends watching the same game"))
        #expect(result.stdout.contains("--version"))
    }

    @Test func unknownOptionIsAClearErrorAndNonZeroExit() async throws {
        let result = try await HuddleBinary.run(["--frobnicate"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("Unknown option '--frobnicate'"))
    }

    @Test func parsesInProcess() throws {
        #expect(throws: (any Error).self) { try Huddle.parseAsRoot(["--nope"]) }
        #expect(try Huddle.parseAsRoot([]) is Huddle)
    }
}
