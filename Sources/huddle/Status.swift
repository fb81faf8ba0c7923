import ArgumentParser
import Foundation
import HuddleNode

extension Huddle {
    /// `huddle status`: what the running node knows, asked over its control socket.
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the running node's peers, rooms and offsets.",
            discussion: """
                Asks the node running with this data dir over its control socket: the node, its \
                peers (state, round trip, last heard from), each room's members with how far \
                their stream is from yours, and traffic counters. Exits with status 1 if no node \
                is running there.
                """
        )

        @OptionGroup var location: NodeLocationOptions

        @Flag(name: .long, help: "Print the status as JSON (snake_case keys).")
        var json = false

        func run() async throws {
            let response = try await location.ask(.status)
            guard case .status(let status) = response else { throw CommandFailure(unexpected: response) }
            print(json ? try status.jsonText() : status.text())
        }
    }
}

/// Which node a command is about: `--name NICK` (its default data dir) or `--data-dir DIR`.
/// Shared by the commands that talk to a node or read its store.
struct NodeLocationOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The node's nick: finds its default data dir.", valueName: "NICK"))
    var name: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The node's data dir (default: $XDG_DATA_HOME/huddle/NICK or ~/.local/share/huddle/NICK).",
            valueName: "DIR"))
    var dataDir: String?

    func validate() throws {
        guard name != nil || dataDir != nil else { throw ValidationError("give --name NICK or --data-dir DIR") }
    }

    /// The data dir: `--data-dir`, or the default one for `--name`.
    var directory: String {
        DataDirectory.resolve(explicit: dataDir, nick: name ?? "")
    }

    /// How to start a node that these options would find.
    var startCommand: String {
        let nick = name.map(Self.shellQuoted) ?? "NICK"
        let where_ = dataDir == nil ? "" : " --data-dir \(Self.shellQuoted(directory))"
        return "huddle run --name \(nick)\(where_)"
    }

    /// Sends one request to the node's control socket.
    func ask(_ request: ControlRequest) async throws -> ControlResponse {
        let response = try await ControlClient.request(
            request, socketPath: DataDirectory.controlSocketPath(in: directory), timeout: .seconds(10),
            startCommand: startCommand)
        if case .error(let message) = response { throw CommandFailure(message) }
        return response
    }

    private static func shellQuoted(_ text: String) -> String {
        let plain = text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                    || "-_./@%+=:,".unicodeScalars.contains(scalar))
        }
        return plain && !text.isEmpty ? text : "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}

/// A command failed for a reason the user can read; ArgumentParser prints it as
/// `Error: <message>` and exits with status 1.
struct CommandFailure: Error, CustomStringConvertible {
    var description: String

    init(_ message: String) {
        description = message
    }

    init(unexpected response: ControlResponse) {
        description = "the node gave an unexpected answer: \(response)"
    }
}
