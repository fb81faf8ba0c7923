import ArgumentParser
import HuddleNode

extension Huddle {
    /// `huddle send`: a chat message through the running node.
    struct Send: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send a chat message to a room, or a direct message to one peer, through the running node.",
            discussion: """
                The node must be running and in the room (--room), or know the peer (--to NICK, \
                or NICK#IDPREFIX when two share a nick). Prints the message's event id \
                (ORIGIN#SEQ). Readers see it held back to their stream, as if typed in the console; \
                a direct message only its recipient can read.
                """
        )

        @OptionGroup var location: NodeLocationOptions

        @Option(name: .long, help: ArgumentHelp("The room to send to.", valueName: "ROOM"))
        var room: String?

        @Option(name: .long, help: ArgumentHelp("Send a direct message to this peer instead.", valueName: "NICK"))
        var to: String?

        @Argument(help: ArgumentHelp("The message (words are joined with spaces).", valueName: "TEXT"))
        var text: [String]

        func validate() throws {
            guard (room == nil) != (to == nil) else { throw ValidationError("give either --room ROOM or --to NICK") }
            guard room?.allSatisfy(\.isWhitespace) != true else { throw ValidationError("--room cannot be blank") }
            guard to?.allSatisfy(\.isWhitespace) != true else { throw ValidationError("--to cannot be blank") }
            guard !message.allSatisfy(\.isWhitespace) else { throw ValidationError("nothing to send") }
        }

        var message: String { text.joined(separator: " ") }

        func run() async throws {
            let request: ControlRequest =
                if let to { .sendDirect(to: to, text: message) } else { .send(room: room ?? "", text: message) }
            let response = try await location.ask(request)
            guard case .sent(let id) = response else { throw CommandFailure(unexpected: response) }
            print(id)
        }
    }
}
