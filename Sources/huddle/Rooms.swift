import ArgumentParser
import Foundation
import HuddleCore
import HuddleNode

extension Huddle {
    /// `huddle rooms`: browse the LAN over mDNS, without running a node.
    struct Rooms: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the rooms advertised on the local network, with the nicks in each.",
            discussion: """
                Browses for Huddle nodes over mDNS (DNS-SD) for a few seconds and lists every \
                room they advertise. Needs a running mDNS daemon (avahi-daemon on Linux); exits \
                with status 1 and says how to start one if none answers.

                A private room is advertised by an opaque id, never its name, and listed as \
                "private room ~abcde"; give --room and --passphrase-file to see which one is yours.
                """
        )

        @Option(name: .long, help: ArgumentHelp("How long to listen, in seconds.", valueName: "S"))
        var timeout: Double = 3

        @Flag(name: .long, help: "Print one JSON object: rooms with their nicks, and the nodes seen.")
        var json = false

        @Option(name: .long, help: ArgumentHelp("A private room to recognise, with --passphrase-file.", valueName: "ROOM"))
        var room: String?

        @Option(name: .long, help: ArgumentHelp("The passphrase of --room (first line of FILE).", valueName: "FILE"))
        var passphraseFile: String?

        func validate() throws {
            guard timeout > 0, timeout <= 600 else { throw ValidationError("--timeout must be between 0 and 600 seconds") }
            guard (room == nil) == (passphraseFile == nil) else {
                throw ValidationError("--room and --passphrase-file go together")
            }
            if let passphraseFile { _ = try Passphrase.read(from: passphraseFile) }
        }

        /// How a room is listed: its name, a private room this key opens by its name, else
        /// "private room" and the start of its id.
        static func label(_ room: String, key: RoomKey?) -> String {
            if let key, key.id == room { return "\(key.name) (private)" }
            return RoomKey.isPrivate(room) ? "private room \(room.prefix(6))" : room
        }

        func run() async throws {
            let key = try room.map { try RoomKey(room: $0, passphrase: try Passphrase.read(from: passphraseFile ?? "")) }
            guard let seen = await Browse.nodes(for: .milliseconds(Int64(timeout * 1000))) else {
                throw CommandFailure(
                    "no mDNS daemon answers on this machine, so no rooms can be listed: start one "
                        + "(sudo systemctl enable --now avahi-daemon), or ask a node you know with huddle status")
            }
            let rooms = Dictionary(grouping: seen.values.flatMap { peer in peer.rooms.map { ($0, peer.nick) } }, by: \.0)
                .mapValues { $0.map(\.1).sorted() }
            if json {
                let object: [String: Any] = [
                    "rooms": rooms.keys.sorted().map { room -> [String: Any] in
                        var entry: [String: Any] = ["name": room, "nicks": rooms[room]!, "private": RoomKey.isPrivate(room)]
                        if let key, key.id == room { entry["name"] = key.name; entry["private_id"] = room }
                        return entry
                    },
                    "nodes": seen.values.sorted { $0.nick < $1.nick }.map { peer in
                        [
                            "id": peer.id.hex, "nick": peer.nick, "address": "\(PeerAddress(host: peer.host, port: peer.port))",
                            "rooms": peer.rooms,
                        ] as [String: Any]
                    },
                ]
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
                print(String(decoding: data, as: UTF8.self))
            } else if rooms.isEmpty {
                print(seen.isEmpty ? "no Huddle nodes found on this network" : "nodes found, but none is in a room")
            } else {
                let labels = Dictionary(uniqueKeysWithValues: rooms.keys.map { ($0, Self.label($0, key: key)) })
                let width = labels.values.map(\.count).max() ?? 0
                for room in rooms.keys.sorted(by: { labels[$0]! < labels[$1]! }) {
                    print(labels[room]!.padding(toLength: width + 2, withPad: " ", startingAt: 0) + rooms[room]!.joined(separator: ", "))
                }
            }
        }
    }
}
