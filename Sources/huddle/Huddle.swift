import ArgumentParser
import HuddleCore

/// The `huddle` command: the root of every subcommand.
@main
struct Huddle: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "huddle",
        abstract: "Spoiler-free chat for friends watching the same game on different streams.",
        discussion: """
            Every viewer on the home network runs one Huddle node. Nodes find each other over \
            mDNS, replicate the room's chat peer to peer, and hold each message back until your \
            own stream has reached the moment it was written in: mark a moment everyone sees \
            ("/now kickoff") and Huddle works out how far each stream is ahead of or behind yours.
            """,
        version: "huddle \(HuddleVersion.release) (wire protocol \(WireProtocol.version))",
        subcommands: [Run.self, Status.self, Rooms.self, Send.self, History.self]
    )

    mutating func run() async throws {
        print(Self.helpMessage())
    }
}
