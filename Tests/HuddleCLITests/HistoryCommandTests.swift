import Foundation
import Testing

@testable import huddle

@Suite struct HistoryCommandTests {
    init() { BrokenPipes.ignored }

    @Test func missingDataDirIsAClearError() async throws {
        let directory = try ScratchDirectory()
        let missing = directory.path + "/nobody"
        let result = try await HuddleBinary.run(["history", "--data-dir", missing, "--room", "superbowl"])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "Error: no Huddle data in \(missing) (start a node with this data dir first)\n")
        #expect(!FileManager.default.fileExists(atPath: missing))  // read-only: nothing created
    }

    @Test func optionsAreChecked() async throws {
        // (Without --room the room the node was last in is listed; a private room's passphrase
        // is of no use without its name.)
        let secret = try ScratchDirectory()
        let passphrase = secret.path + "/passphrase"
        try "touchdown\n".write(toFile: passphrase, atomically: true, encoding: .utf8)
        let noRoom = try await HuddleBinary.run(["history", "--name", "alice", "--passphrase-file", passphrase])
        #expect(noRoom.status == 64)
        #expect(noRoom.stderr.contains("--passphrase-file needs --room: the private room's name"))

        let badLimit = try await HuddleBinary.run(["history", "--name", "alice", "--room", "r", "--limit", "0"])
        #expect(badLimit.status == 64)
        #expect(badLimit.stderr.contains("--limit must be a positive number"))

        let nowhere = try await HuddleBinary.run(["history", "--room", "r"])
        #expect(nowhere.status == 64)
        #expect(nowhere.stderr.contains("give --name NICK or --data-dir DIR"))
    }

    @Test func parsesInProcess() throws {
        let history = try #require(
            try Huddle.parseAsRoot(["history", "--data-dir", "/tmp/x", "--room", "r", "--limit", "5", "--json"])
                as? Huddle.History)
        #expect(history.limit == 5)
        #expect(history.json)
        #expect(history.location.directory == "/tmp/x")
    }
}
