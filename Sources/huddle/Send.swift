import ArgumentParser
import Foundation
import HuddleNode

extension Huddle {
    /// `huddle send`: a chat message, or a console command, through the running node.
    struct Send: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send a message, or run a console command, through the running node.",
            discussion: """
                The node must be running; the message goes to the room its console is in, or to \
                --room ROOM (a room it is in), or to one peer (--to NICK, or NICK#IDPREFIX when two \
                share a nick). Readers see a message held back to their stream, as if typed in the \
                console; a direct message only its recipient can read. Says where it went: "sent to \
                superbowl; pushed to bob and carol" (the live peers it went to at once; the rest get \
                it when they pull), "sent privately to bob; pushed to bob".

                TEXT starting with / is a console command run in the room as if typed at the node's \
                console there: /now kickoff, /event "two minute warning", /unmark kickoff, \
                /delay +1, /score 7-3, /msg bob psst, /shield off, /history 5, /who. It prints \
                what the console would say. /quit, /private and /web need the console itself; a \
                mark that asks to be confirmed is confirmed by sending it again, never at the console.

                --photo FILE (or --clip FILE) sends a picture or a short clip, TEXT its caption: \
                held back like a line, fetched by each peer ahead of its moment; GPS, camera and \
                time metadata are removed first. \
                It prints the message as the console shows it (with --json, its JSON line).

                With --json: {"id":"ORIGIN#SEQ","room","pushed_to":[NICK...]} for a message, the \
                node's JSON lines for a command.
                """
        )

        @OptionGroup var location: NodeLocationOptions

        @Option(
            name: .long,
            help: ArgumentHelp("The room to send to (or to run the command in); the console's room if not given.", valueName: "ROOM"))
        var room: String?

        @Option(name: .long, help: ArgumentHelp("Send a direct message to this peer instead.", valueName: "NICK"))
        var to: String?

        @Flag(name: .long, help: "Print JSON: the message's id and where it went, or the command's JSON lines.")
        var json = false

        @Option(
            name: [.customLong("photo"), .customLong("clip")],
            help: ArgumentHelp(
                "Send this picture (JPEG, PNG or WebP) or short clip (MP4 or WebM, at most 30 s), at most 16 MiB, with TEXT as its caption; where and when it was taken is removed first.",
                valueName: "FILE"))
        var photo: String?

        @Argument(help: ArgumentHelp("The message or /command (words are joined with spaces); with --photo, its caption.", valueName: "TEXT"))
        var text: [String] = []

        func validate() throws {
            guard room == nil || to == nil else { throw ValidationError("give either --room ROOM or --to NICK, not both") }
            guard room?.allSatisfy(\.isWhitespace) != true else { throw ValidationError("--room cannot be blank") }
            guard to?.allSatisfy(\.isWhitespace) != true else { throw ValidationError("--to cannot be blank") }
            if let photo {
                guard to == nil, !isCommand else { throw ValidationError("--photo goes to a room (--room), with a caption, not a command") }
                guard !photo.contains("\"") else { throw ValidationError("--photo: a path with a double quote in it cannot be sent") }
                return
            }
            guard !message.allSatisfy(\.isWhitespace) else { throw ValidationError("nothing to send") }
            if to != nil, isCommand {
                throw ValidationError("a command runs in a room, not to one peer (to write to one peer: /msg NICK TEXT)")
            }
        }

        var message: String { text.joined(separator: " ") }
        var isCommand: Bool { message.drop { $0.isWhitespace }.first == "/" }

        func run() async throws {
            let request: ControlRequest =
                if let photo {
                    // The node reads the file: a path it finds whatever its working directory.
                    .command(room: room ?? "", line: "/photo \"\(Self.absolute(photo))\" \(message)", json: json)
                } else if let to {
                    .sendDirect(to: to, text: message)
                } else if isCommand {
                    .command(room: room ?? "", line: message, json: json)
                } else {
                    .send(room: room ?? "", text: message)
                }
            switch try await location.ask(request) {
            case .said(let lines):
                for line in lines { print(line) }
            case .sent(let id, let room, let pushedTo):
                print(json ? Self.json(id: id, room: room, pushedTo: pushedTo ?? []) : Self.words(room: room, pushedTo: pushedTo))
            case let response:
                throw CommandFailure(unexpected: response)
            }
        }

        static func absolute(_ path: String) -> String {
            let expanded = (path as NSString).expandingTildeInPath
            return expanded.hasPrefix("/") ? expanded : FileManager.default.currentDirectoryPath + "/" + expanded
        }

        /// "sent to superbowl; pushed to bob and carol"; "sent privately to bob; pushed to bob" (a
        /// direct room is "@bob").
        static func words(room: String?, pushedTo: [String]?) -> String {
            let sent: String
            if let room, room.hasPrefix("@") {
                sent = "sent privately to \(TerminalText.escaped(room.dropFirst()))"
            } else {
                sent = "sent" + (room.map { " to \(TerminalText.escaped($0))" } ?? "")
            }
            guard let pushedTo else { return sent }
            guard !pushedTo.isEmpty else { return sent + "; no peer is here yet: it goes out when one is" }
            let names = pushedTo.map(TerminalText.escaped)
            let list = names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " and " + names.last!
            return sent + "; pushed to " + list
        }

        /// One JSON object: `{"id","pushed_to","room"}`.
        static func json(id: String, room: String?, pushedTo: [String]) -> String {
            struct Sent: Encodable {
                let id: String
                let room: String?
                let pushed_to: [String]
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let data = (try? encoder.encode(Sent(id: id, room: room, pushed_to: pushedTo))) ?? Data()
            return String(decoding: data, as: UTF8.self)
        }
    }
}
