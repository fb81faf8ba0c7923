import ArgumentParser
import Foundation
import HuddleCore
import HuddleNode

extension Huddle {
    /// `huddle history`: a room's messages from the store, whether or not the node runs.
    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a room's messages in game-time order, from the node's store.",
            discussion: """
                Reads the store read-only, so it works while the node is running and while it is \
                not. While it runs, it lists what the node has shown: the node is what knows where \
                your stream is (a pause, your /shield, what its sound heard). While it does not, \
                it lists that and, of the messages it has not shown, only those whose moment your \
                stream has reached by now (held back as the node would hold them, with the default \
                shield for writers you are not placed with). A message still held for your stream \
                is not listed, so history never spoils. A message's time is \
                its game time (local HH:MM:SS); while its sender was \
                not calibrated it is the time it was sent, marked with ~. With --json, one object \
                per line: type, room, id, from, nick, text, sent_at, game_ms (null if not calibrated).

                A private room is stored sealed: give its passphrase with --passphrase-file to \
                read it.
                """
        )

        @OptionGroup var location: NodeLocationOptions

        @Option(name: .long, help: ArgumentHelp("The room to list.", valueName: "ROOM"))
        var room: String

        @Option(name: .long, help: ArgumentHelp("The passphrase of private ROOM (first line of FILE).", valueName: "FILE"))
        var passphraseFile: String?

        @Option(name: .long, help: ArgumentHelp("Only the last N messages.", valueName: "N"))
        var limit: Int?

        @Flag(name: .long, help: "Print one JSON object per line.")
        var json = false

        func validate() throws {
            if let limit, limit <= 0 { throw ValidationError("--limit must be a positive number") }
            if let passphraseFile { _ = try Passphrase.read(from: passphraseFile) }
        }

        func run() async throws {
            let directory = location.directory
            let store = try HuddleStore(directory: directory, readOnly: true)
            let key = try passphraseFile.map { try RoomKey(room: room, passphrase: Passphrase.read(from: $0)) }
            let events = try store.events(room: key?.id ?? room)
            guard !events.isEmpty else {
                let rooms = try store.storedRooms()
                let publicRooms = rooms.filter { !RoomKey.isPrivate($0) }
                var known = publicRooms.isEmpty ? "none" : publicRooms.map { "\"\($0)\"" }.joined(separator: ", ")
                if publicRooms.count < rooms.count { known += ", and \(rooms.count - publicRooms.count) private" }
                let hint = key != nil ? " with that passphrase" : (rooms.count > publicRooms.count ? "; a private room needs --passphrase-file" : "")
                throw CommandFailure("nothing stored for room \"\(room)\"\(hint) in \(directory) (rooms there: \(known))")
            }
            // The room as the node would see it: calibration, nicks and causal order from the core.
            let reader = try store.storedIdentity()?.id ?? events[0].origin
            var session = RoomSession(room: key?.id ?? room, reader: reader, key: key)
            // Nicks told apart as the node tells them: alice#3f9a0c1e for a new key calling
            // itself alice.
            session.knownNicks = try store.knownNicks()
            // What the node showed stands. What it has not: while the node runs, it is held (the
            // node shows it at its moment, by what only the node knows: a pause, the viewer's
            // /shield, a step its sound heard; the store alone once listed a line 8 s into a
            // pause, and 54 s early for a viewer on /shield 180); while it does not, it is held
            // back as the node would hold it now, and listed only if it is due.
            if await ControlClient.isAnswering(socketPath: DataDirectory.controlSocketPath(in: directory)) {
                session.pause()
            }
            let now = WallTime(microsecondsSinceEpoch: Int64(Date().timeIntervalSince1970 * 1_000_000))
            _ = session.restore(events, shown: try store.shownIDs(room: key?.id ?? room), now: now)
            let messages = session.history(last: limit ?? .max)
            let renderer = outputRenderer(
                json: json, colors: !json && OutputSink.standardOutputWantsColors, picturesDirectory: directory + "/pictures")
            if messages.isEmpty, !json {
                print("no messages in \(TerminalText.escaped(room)) yet")
            }
            for event in messages {
                let gameTime = session.calibration.gameTime(of: event)
                if let line = renderer.history(event, from: session.member(event.origin), gameTime: gameTime, room: room) {
                    print(line)
                }
            }
        }
    }
}
