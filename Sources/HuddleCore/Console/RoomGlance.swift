/// What the console says of a room at a glance: the status line under the conversation and the
/// answer to `/who`. Pure functions of what the node knows (a room's session, its peers' states,
/// the clock), so what a viewer reads is decided here, next to the console, and tested without a
/// node.
///
/// ```swift
/// RoomGlance.statusLine(of: view, now: now)
/// // "superbowl · 2 peers · you: 3.0 s behind alice"
/// // "superbowl · 2 peers · you: ahead of everyone, carol 4.5 s behind"
/// // "superbowl · 2 peers · not placed: others wait 90 s"
/// ```
///
/// Neither says how many messages are held back or when the next is due unless the viewer asked
/// (``View/showWaiting``): a count that jumps tells that a big play is coming.
public enum RoomGlance {
    /// One room as the node sees it now.
    public struct View {
        /// The room's session (log, calibration, what is held back).
        public var session: RoomSession
        /// The room as people name it ("superbowl", "superbowl (private)", "@alice").
        public var label: String
        /// Peers alive in the room.
        public var alivePeers: Int
        /// When the viewer paused its stream, while it is paused.
        public var pausedAt: WallTime?
        /// Each member's membership state, where it is a known peer.
        public var peerStates: [NodeID: PeerState] = [:]
        /// While the node listens: how many peers its sound is aligned with.
        public var heardPeers: Int?
        /// While the node listens: whether its latest window of sound left it (``SoundSharing``).
        public var sharingSound = false
        /// Whether the viewer asked to see how many messages wait (`--show-waiting`).
        public var showWaiting = false

        public init(
            session: RoomSession, label: String, alivePeers: Int, pausedAt: WallTime? = nil,
            peerStates: [NodeID: PeerState] = [:]
        ) {
            self.session = session
            self.label = label
            self.alivePeers = alivePeers
            self.pausedAt = pausedAt
            self.peerStates = peerStates
        }
    }

    /// What a viewer glances at: room, peers here, where their stream stands, the score, a pause,
    /// what is held back. Without a room: the pause, or how to join one.
    public static func statusLine(of view: View?, pausedAt: WallTime?, now: WallTime) -> String {
        guard let view else {
            return pausedAt.map { "paused \(HumanFormat.elapsed(now - $0))" } ?? "not in a room: /join ROOM"
        }
        let session = view.session
        let reader = session.reader
        var parts = [view.label, view.alivePeers == 1 ? "1 peer" : "\(view.alivePeers) peers"]
        if session.calibration.isCalibrated(reader) {
            parts.append("you: " + standing(among: session.offsetReport.entries, reader: reader))
        } else if let shield = session.shield {
            parts.append("not placed: others wait \(HumanFormat.seconds(shield))")
        } else {
            parts.append("not placed · shield off")
        }
        if let heard = view.heardPeers {
            parts.append((heard > 0 ? "listening: \(heard) heard" : "listening") + (view.sharingSound ? ", sharing sound" : ""))
        }
        if let board = session.scoreboard { parts.append(HumanFormat.score(board)) }
        if let pausedAt = view.pausedAt { parts.append("paused \(HumanFormat.elapsed(now - pausedAt))") }
        if view.showWaiting, session.heldBackCount > 0 {
            var waiting = "\(session.heldBackCount) waiting"
            if let wake = session.nextWake {
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
    public static func who(in view: View) -> String {
        let session = view.session
        let reader = session.reader
        var lines = ["in \(view.label):"]
        if let board = session.scoreboard {
            lines[0] = "in \(view.label), score \(HumanFormat.score(board)) on your stream (by \(board.by.displayName)):"
        }
        for entry in session.offsetReport.entries {
            let name = entry.member.id == reader ? "\(entry.member.nick) (you)" : entry.member.displayName
            let standing: String
            if entry.member.id == reader {
                standing = session.calibration.isCalibrated(reader) ? "calibrated" : "not placed yet"
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
