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

    @Test func needsTextAndAtMostOneWayToSendIt() async throws {
        let both = try await HuddleBinary.run(["send", "--name", "alice", "--room", "superbowl", "--to", "bob", "hi"])
        #expect(both.status == 64)
        #expect(both.stderr.contains("give either --room ROOM or --to NICK, not both"))
        // Without --room it goes to the console's room: parsed, and asks the node.
        let send = try #require(try Huddle.parseAsRoot(["send", "--name", "alice", "hi"]) as? Huddle.Send)
        #expect(send.room == nil && send.to == nil)

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

    @Test func saysWhereItWentInWords() {
        #expect(Huddle.Send.words(room: "superbowl", pushedTo: ["bob", "carol"]) == "sent to superbowl; pushed to bob and carol")
        #expect(Huddle.Send.words(room: "@bob", pushedTo: ["bob"]) == "sent privately to bob; pushed to bob")
        #expect(Huddle.Send.words(room: "@bob", pushedTo: []) == "sent privately to bob; no peer is here yet: it goes out when one is")
    }

    @Test func wordsAreJoined() throws {
        let send = try #require(
            try Huddle.parseAsRoot(["send", "--name", "alice", "--room", "superbowl", "what", "a", "catch"])
                as? Huddle.Send)
        #expect(send.room == "superbowl")
        #expect(send.message == "what a catch")
    }
}
