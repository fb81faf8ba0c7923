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

                Without --room it lists the room the node was last in (where a typed line goes). \
                A private room is stored sealed: give its name with --room and its passphrase with \
                --passphrase-file to read it.
                """
        )

        @OptionGroup var location: NodeLocationOptions

        @Option(name: .long, help: ArgumentHelp("The room to list (default: the room the node was last in).", valueName: "ROOM"))
        var room: String?

        @Option(name: .long, help: ArgumentHelp("The passphrase of private ROOM (first line of FILE).", valueName: "FILE"))
        var passphraseFile: String?

        @Option(name: .long, help: ArgumentHelp("Only the last N messages.", valueName: "N"))
        var limit: Int?

        @Flag(name: .long, help: "Print one JSON object per line.")
        var json = false

        func validate() throws {
            if let limit, limit <= 0 { throw ValidationError("--limit must be a positive number") }
            if let passphraseFile {
                guard room != nil else { throw ValidationError("--passphrase-file needs --room: the private room's name") }
                _ = try Passphrase.read(from: passphraseFile)
            }
        }

        /// `--room`, or the room the node was last in; a private one needs its name and
        /// passphrase, which the store does not hold.
        private func roomToList(in store: HuddleStore) throws -> String {
            if let room { return room }
            guard let current = try store.currentRoom else {
                throw CommandFailure("no room to list: give one with --room ROOM (\(try Self.roomsThere(store)))")
            }
            guard !RoomKey.isPrivate(current) else {
                let name = try store.privateRoomName(current).map { "\"\($0)\"" } ?? "the room"
                throw CommandFailure(
                    "the node was last in private room \(name): give --room and --passphrase-file to read it")
            }
            return current
        }

        /// The rooms a store holds, as said in an error: the public ones by name.
        private static func roomsThere(_ store: HuddleStore) throws -> String {
            let rooms = try store.storedRooms()
            let publicRooms = rooms.filter { !RoomKey.isPrivate($0) }
            var known = publicRooms.isEmpty ? "none" : publicRooms.map { "\"\($0)\"" }.joined(separator: ", ")
            if publicRooms.count < rooms.count { known += ", and \(rooms.count - publicRooms.count) private" }
            return "rooms there: \(known)"
        }

        func run() async throws {
            let directory = location.directory
            let store = try HuddleStore(directory: directory, readOnly: true)
            let room = try roomToList(in: store)
            let key = try passphraseFile.map { try RoomKey(room: room, passphrase: Passphrase.read(from: $0)) }
            let events = try store.events(room: key?.id ?? room)
            guard !events.isEmpty else {
                let rooms = try store.storedRooms()
                let anyPrivate = rooms.contains(where: RoomKey.isPrivate)
                let hint = key != nil ? " with that passphrase" : (anyPrivate ? "; a private room needs --passphrase-file" : "")
                throw CommandFailure("nothing stored for room \"\(room)\"\(hint) in \(directory) (\(try Self.roomsThere(store)))")
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
