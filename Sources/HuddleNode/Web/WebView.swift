import HuddleCore

/// The `view` message (docs/WEB.md): what the console's status line shows, taken apart for the
/// page: the room, the status line in words, the big Now's moment, the ladder of who is ahead or
/// behind, the rooms to switch to. It counts nothing that is still held back (unless the viewer
/// asked, `--show-waiting`, and then only inside `status`, as the console does).
enum WebView {
    static func json(_ view: ConsoleView, nick: String, listening: Bool) -> String {
        let glance = view.status.room
        var ladder: [JSONLine] = []
        for entry in glance?.entries ?? [] {
            let you = entry.member.id == glance?.reader
            ladder.append(
                .object([
                    ("nick", .string(entry.member.displayName)), ("you", .bool(you)),
                    ("behind_ms", you ? .int(0) : entry.behindReader.map { .int($0.milliseconds) } ?? .null),
                ]))
        }
        let offer: JSONLine = view.offer.map { .object([("label", .string($0.label.normalized)), ("more", .int(Int64($0.more)))]) } ?? .null
        // Placed with nobody and nothing on offer: the moments anyone can name ahead, to tap.
        let unplaced = glance.map { !$0.readerPlaced } ?? false
        let suggest: JSONLine = unplaced ? .array(SpoilerFreeMoment.suggested.map { .string($0) }) : .null
        return JSONLine.object([
            ("t", "view"), ("nick", .string(nick)), ("id", glance.map { .string($0.reader.hex) } ?? .null),
            ("room", view.room.map { .string($0) } ?? .null),
            ("status", .string(RoomGlance.statusLine(of: view.status, roomAndScore: false))),
            ("suggest", suggest),
            ("placed", .bool(glance?.readerPlaced ?? false)), ("paused", .bool(view.status.pausedAt != nil)),
            ("listening", .bool(listening)), ("offer", offer), ("ladder", .array(ladder)),
            ("rooms", .array(view.words.rooms.map { .string($0) })),
            ("score", glance?.scoreboard.map { .string(HumanFormat.score($0)) } ?? .null),
        ]).render()
    }
}
