import Foundation
import Testing

@testable import huddle

@Suite struct SendCommandTests {
    init() { BrokenPipes.ignored }

    @Test func noNodeIsAClearErrorAndExitStatus1() async throws {
        let directory = try ScratchDirectory()
        let result = try await HuddleBinary.run([
            "send", "--data-dir", directory.path, "--room", "superbowl", "what", "a", "catch",
        ])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("no Huddle node is running with data dir \(directory.path)"))
    }

    @Test func needsARoomAndText() async throws {
        let noRoom = try await HuddleBinary.run(["send", "--name", "alice", "hi"])
        #expect(noRoom.status == 64)
        #expect(noRoom.stderr.contains("give either --room ROOM or --to NICK"))

        let noText = try await HuddleBinary.run(["send", "--name", "alice", "--room", "superbowl"])
        #expect(noText.status == 64)
        #expect(noText.stderr.contains("<TEXT>"))

        let blank = try await HuddleBinary.run(["send", "--name", "alice", "--room", "superbowl", "  "])
        #expect(blank.status == 64)
        #expect(blank.stderr.contains("nothing to send"))

        let nowhere = try await HuddleBinary.run(["send", "--room", "superbowl", "hi"])
        #expect(nowhere.status == 64)
        #expect(nowhere.stderr.contains("give --name NICK or --data-dir DIR"))
    }

    @Test func wordsAreJoined() throws {
        let send = try #require(
            try Huddle.parseAsRoot(["send", "--name", "alice", "--room", "superbowl", "what", "a", "catch"])
                as? Huddle.Send)
        #expect(send.room == "superbowl")
        #expect(send.message == "what a catch")
    }
}
