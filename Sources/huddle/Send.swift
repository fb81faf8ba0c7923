import ArgumentParser
import HuddleNode

extension Huddle {
    /// `huddle send`: a chat message through the running node.
    struct Send: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send a chat message to a room through the running node.",
            discussion: """
                The node must be running and in the room. Prints the message's event id \
                (ORIGIN#SEQ). Readers see it held back to their stream, as if typed in the console.
                """
        )

        @OptionGroup var location: NodeLocationOptions

        @Option(name: .long, help: ArgumentHelp("The room to send to.", valueName: "ROOM"))
        var room: String

        @Argument(help: ArgumentHelp("The message (words are joined with spaces).", valueName: "TEXT"))
        var text: [String]

        func validate() throws {
            guard !room.allSatisfy(\.isWhitespace) else { throw ValidationError("--room cannot be blank") }
            guard !message.allSatisfy(\.isWhitespace) else { throw ValidationError("nothing to send") }
        }

        var message: String { text.joined(separator: " ") }

        func run() async throws {
            let response = try await location.ask(.send(room: room, text: message))
            guard case .sent(let id) = response else { throw CommandFailure(unexpected: response) }
            print(id)
        }
    }
}
