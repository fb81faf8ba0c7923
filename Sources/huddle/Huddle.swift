import ArgumentParser
import HuddleCore
import HuddleNode

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
        subcommands: [Run.self, Status.self, Rooms.self, Send.self, History.self, Align.self, Doctor.self]
    )

    mutating func run() async throws {
        print(Self.helpMessage())
    }

    /// Parses and runs as ArgumentParser does, except that with `--json` an error a person
    /// caused (a bad flag, a bad value, an unreadable file) is one JSON line on stdout,
    /// `{"type":"error","message":...}`, with the same exit code, so a script reads it where it
    /// reads everything else.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            guard CommandLine.arguments.dropFirst().contains("--json"), code != .success,
                !(error is ExitCode)
            else { exit(withError: error) }
            let message = fullMessage(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
            print(JSONRenderer().error(message.replacingOccurrences(of: "Error: ", with: "")))
            exit(withError: ExitCode(code.rawValue))
        }
    }
}
