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
            let response: ControlResponse
            do {
                response = try await location.ask(.status)
            } catch where json {
                // Scripts read JSON on stdout, errors too: {"type":"error","message":...}, exit 1.
                print(JSONRenderer().error("\(error)"))
                throw ExitCode.failure
            }
            guard case .status(let status) = response else { throw CommandFailure(unexpected: response) }
            print(json ? try status.jsonText() : status.text(width: TerminalWidth.ofStandardOutput()))
        }
    }
}
