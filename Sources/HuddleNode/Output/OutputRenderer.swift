import Foundation
public import HuddleCore

/// Turns what a node has to show into the text `huddle run` writes on stdout: readable lines for
/// a person (``HumanRenderer``), or exactly one JSON object per line with `--json` and for the
/// page (``JSONRenderer``). The node picks one at start (``outputRenderer(json:colors:interactive:picturesDirectory:)``)
/// and asks it for every line; neither decides what is shown, only how it reads.
///
/// Pure: every method returns the text (without the final newline) and writes nothing; hand it
/// to an ``OutputSink``.
///
/// ```swift
/// let renderer = outputRenderer(json: false, colors: OutputSink.standardOutputIsTerminal)
/// for output in room.receive(event, now: now) {
///     if let text = renderer.render(output, room: "superbowl", reader: me.id, inCurrentRoom: true, directTo: nil, isPrivate: false) {
///         sink.write(text)
///     }
/// }
/// // 21:03:17 bob: what a catch  (held 2.0 s)
/// // * carol is 1.5 s ahead of you
/// ```
public protocol OutputRenderer: Sendable {
    /// Whether lines are JSON objects: what a face that words things itself asks (the doctor's
    /// report, the delivery lines, the pairing code).
    var isJSON: Bool { get }
    /// Where the node keeps pictures (``PictureStore``): a shown picture's file is named there.
    var picturesDirectory: String? { get }

    /// The line(s) for one room output, or `nil` if there is nothing to show (an offset report
    /// that says nothing about anyone but the reader). Human lines may be several joined by
    /// `"\n"`; JSON is one line per item.
    ///
    /// - Parameters:
    ///   - room: the room it happened in (its name for JSON, its label for people).
    ///   - reader: this node, for "you" and for offsets relative to it.
    ///   - inCurrentRoom: `false` puts the room's name in front of human lines, for rooms other
    ///     than the console's current one.
    ///   - directTo: for a direct message, the nick it was sent to.
    ///   - isPrivate: the room is a private room (JSON messages say `"private": true`).
    func render(
        _ output: RoomOutput, room: String, reader: NodeID, inCurrentRoom: Bool, directTo: String?, isPrivate: Bool
    ) -> String?
    /// A chat message from the store, as `huddle history` and `/history` list it: like a shown
    /// message without `shown_at` and `held_ms`. `nil` for an event that is not a chat message.
    /// `gameTime`: the message's game time, `nil` while its sender is not calibrated.
    func history(_ event: Event, from member: Member, gameTime: WallTime?, room: String) -> String?
    /// Once the node listens.
    func ready(id: NodeID, nick: String, port: Int, dataDir: String) -> String
    /// Listening began.
    func listening(source: String, startedAt: WallTime) -> String
    /// Listening ended: `reason` says why, `nil` when a file played to its end.
    func listeningStopped(reason: String?) -> String
    /// Something went wrong that the user should read.
    func error(_ message: String) -> String
    /// Something that happened to this node, said like the room's notices.
    func notice(_ text: String) -> String
    /// What the machine said happened, or its answer to a command.
    func notice(_ notice: NodeNotice) -> String
    /// The answer to a console command (`/who`, `/rooms`, `/help`...), possibly several lines.
    func info(_ text: String) -> String
    /// The shield as it stands, or as the reader just set it (`/shield`).
    func shield(_ shield: TimeSpan?, changed: Bool) -> String
    /// A mark that would move the reader far, not made: press again to make it.
    func confirmMark(_ wild: WildMark, room: String, proposedAgo: TimeSpan?) -> String
    /// A node joined under a nick first seen with another node: it may pass itself off as
    /// someone else. From now on it shows as `nick#abcd` (see ``Member/displayName``).
    func nickConflict(_ member: Member, knownID: NodeID) -> String
    /// A peer was found, stopped answering, came back or went away. `left`: it is gone because
    /// it said goodbye.
    func peer(id: NodeID, nick: String, state: PeerState, address: String?, left: Bool) -> String
}

/// The renderer for `--json` (`json`), or for a person, coloured when `colors` (never in JSON);
/// `interactive`: the reader is at the interactive console, where one key marks a proposed
/// moment, so prompts say to press Enter rather than to type `/now LABEL`.
public func outputRenderer(
    json: Bool, colors: Bool, interactive: Bool = false, picturesDirectory: String? = nil
) -> any OutputRenderer {
    json
        ? JSONRenderer(picturesDirectory: picturesDirectory)
        : HumanRenderer(colors: colors, interactive: interactive, picturesDirectory: picturesDirectory)
}

extension OutputRenderer {
    /// Where a shown picture's file is (``PictureStore/shownPath(of:)``), when this renderer knows.
    func path(of picture: Picture) -> String? {
        picturesDirectory.map { "\($0)/\(picture.rootHex).\(picture.type.fileExtension)" }
    }

    /// Whether a picture's own file is on disk (shown, or being listed by history after it was).
    func isOnDisk(_ picture: Picture) -> Bool {
        path(of: picture).map { FileManager.default.fileExists(atPath: $0) } ?? false
    }

    /// Why a mark was not made, and how to make it anyway: the same words on either face.
    func confirmMarkWords(_ wild: WildMark, proposedAgo: TimeSpan?) -> String {
        let label = wild.label.normalized
        var because: String
        switch wild.reach {
        case .move(let move):
            because = "your mark of \"\(label)\" would move you \(HumanFormat.duration(move)) "
                + (move > .zero ? "further behind" : "ahead")
        case .apart(let peer, let behind):
            because = "your mark of \"\(label)\" would put you \(HumanFormat.duration(behind)) "
                + "\(behind >= .zero ? "behind" : "ahead of") \(TerminalText.escaped(peer.displayName))"
        }
        if let proposedAgo, proposedAgo > WildMark.largestMove {
            because += " (it was proposed \(HumanFormat.duration(proposedAgo)) ago)"
        }
        return because
            + "; Enter again (or /now \(label)) within \(HumanFormat.seconds(WildMark.confirmWindow)) to mark it anyway"
    }
}
