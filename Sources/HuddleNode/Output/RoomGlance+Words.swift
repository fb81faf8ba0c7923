public import HuddleCore

/// What the console says of a room at a glance, in words: the status line under the conversation
/// and the answer to `/who`. Pure functions of the machine's glance (``RoomGlance``,
/// ``StatusGlance``: plain values), tested without a node.
///
/// ```swift
/// RoomGlance.statusLine(of: machine.statusGlance(now: now))
/// // "superbowl · 2 peers · you: 3.0 s behind alice"
/// // "superbowl · 2 peers · you: ahead of everyone, carol 4.5 s behind"
/// // "superbowl · 2 peers · not placed: others wait 90 s"
/// ```
///
/// Neither says how many messages are held back or when the next is due unless the viewer asked
/// (``RoomGlance/showWaiting``): a count that jumps tells that a big play is coming.
extension RoomGlance {
    /// What a viewer glances at: room, peers here, where their stream stands, the score, a pause,
    /// what is held back. Without a room: the pause, or how to join one. `roomAndScore: false`
    /// leaves out the room and the score, which a phone's page shows apart.
    public static func statusLine(of status: StatusGlance, roomAndScore: Bool = true) -> String {
        let now = status.now
        guard let view = status.room else {
            return status.pausedAt.map { "paused \(HumanFormat.elapsed(now - $0))" } ?? "not in a room: /join ROOM"
        }
        var parts = (roomAndScore ? [view.label] : []) + [view.alivePeers == 1 ? "1 peer" : "\(view.alivePeers) peers"]
        if view.readerPlaced {
            // Who has gone (quit, or dead) is not where the reader's stream stands against.
            let here = view.entries.filter { view.peerStates[$0.member.id] != .gone }
            parts.append("you: " + standing(among: here, reader: view.reader))
        } else if let shield = view.shield {
            parts.append("not placed: others wait \(HumanFormat.seconds(shield))")
        } else {
            parts.append("not placed · shield off")
        }
        if let heard = view.heardPeers {
            parts.append((heard > 0 ? "listening: \(heard) heard" : "listening") + (view.sharingSound ? ", sharing sound" : ""))
        }
        if roomAndScore, let board = view.scoreboard { parts.append(HumanFormat.score(board)) }
        if let pausedAt = view.pausedAt { parts.append("paused \(HumanFormat.elapsed(now - pausedAt))") }
        if view.showWaiting, view.heldBack > 0 {
            var waiting = "\(view.heldBack) waiting"
            if let wake = view.nextWake {
                // Whole seconds, the nearest (halves up).
                let seconds = max(0, (wake - now + .milliseconds(500)).milliseconds / 1000)
                waiting += seconds > 0 ? ", next in \(seconds) s" : ", next now"
            }
            parts.append(waiting)
        }
        return parts.joined(separator: " · ")
    }

    /// Where the reader's stream stands, in the words a person asks it in — who is ahead of me, by
    /// how much: behind the stream furthest ahead of it, else in step with one, else ahead of
    /// everyone (and of the furthest behind by how much). It depends only on how the streams lie,
    /// never on whose mark came first (the calibration's reference), so it does not change when
    /// that does; and it is the number `/who` and `huddle status` give, rounded the same way.
    static func standing(among entries: [OffsetReport.Entry], reader: NodeID) -> String {
        let others = entries.compactMap { entry in
            entry.member.id == reader ? nil : entry.behindReader.map { (name: entry.member.displayName, behind: $0) }
        }
        // Ties go to the name first in order, so the line does not flicker between equals.
        func first(_ candidates: [(name: String, behind: TimeSpan)], by better: (TimeSpan, TimeSpan) -> Bool)
            -> (name: String, behind: TimeSpan)?
        {
            candidates.min { better($0.behind, $1.behind) || ($0.behind == $1.behind && $0.name < $1.name) }
        }
        if let ahead = first(others.filter { $0.behind < .zero }, by: <) {
            return "\(HumanFormat.duration(ahead.behind)) behind \(ahead.name)"
        }
        if let level = first(others.filter { $0.behind == .zero }, by: <) {
            return "in step with \(level.name)"
        }
        if let last = first(others, by: >) {
            return "ahead of everyone, \(last.name) \(HumanFormat.duration(last.behind)) behind"
        }
        return "placed"
    }

    /// `/who`: each member, with where its stream stands against the reader's and whether it
    /// answers; the score first, if anyone posted one.
    public static func who(in view: RoomGlance) -> String {
        let reader = view.reader
        var lines = ["in \(view.label):"]
        if let board = view.scoreboard {
            lines[0] = "in \(view.label), score \(HumanFormat.score(board)) on your stream (by \(board.by.displayName)):"
        }
        for entry in view.entries {
            let name = entry.member.id == reader ? "\(entry.member.nick) (you)" : entry.member.displayName
            let standing: String
            if entry.member.id == reader {
                standing = view.readerPlaced ? "calibrated" : "not placed yet"
            } else if let behind = entry.behindReader {
                let heard = entry.heard.map { " (heard, \(HumanFormat.sureness(confidence: $0.confidence)))" } ?? ""
                standing = HumanFormat.lag(behind) + heard
            } else {
                standing = "not calibrated with you yet"
            }
            let state = view.peerStates[entry.member.id].map { " [\($0)]" } ?? ""
            lines.append("  \(name): \(standing)\(state)")
        }
        return lines.joined(separator: "\n")
    }
}
