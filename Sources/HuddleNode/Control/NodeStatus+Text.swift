import Foundation
public import HuddleCore

extension NodeStatus {
    /// The status as `huddle status --json` prints it: snake_case keys, sorted, indented.
    ///
    /// ```json
    /// {
    ///   "counters" : { "events_received" : 30, ... },
    ///   "node" : { "data_dir" : "/home/me/.local/share/huddle/alice", "id" : "3f9a…", ... },
    ///   ...
    /// }
    /// ```
    public func jsonText() throws -> String {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        // Version vector keys are lowercase hex ids, which snake-casing leaves as they are.
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    /// The status as `huddle status` prints it for a person: the node, a table of peers, one
    /// section per room with where each member's stream stands against this node's, then the
    /// counters. Text that came from other nodes is made safe for a terminal. With `width` (a
    /// terminal's columns) the tables leave out what is least missed (ids, how a peer was found,
    /// when it was last heard) rather than wrap; the offsets from the group's reference and the
    /// reference itself are in `--json`.
    ///
    /// ```text
    /// alice  3f9a0c1e22b4  port 7700  up 1 h 2 min  addresses 192.0.2.11
    /// data dir /home/me/.local/share/huddle/alice
    ///
    /// PEERS
    ///   NICK  ID            ADDRESS          STATE  RTT     LAST SEEN  ROOMS      FOUND BY
    ///   bob   0a1b2c3d4e5f  192.0.2.12:7700  alive  0.4 ms  1.2 s ago  superbowl  mdns
    ///
    /// ROOM superbowl (current): 42 events shown
    ///   NICK         ID            STREAM            CALIBRATED
    ///   alice (you)  3f9a0c1e22b4  yours             yes
    ///   bob          0a1b2c3d4e5f  2.0 s behind you  heard (48)
    ///   shown by writer: alice 12, bob 30
    ///
    /// COUNTERS packets in 10, out 12, rejected 3; events received 30, stored 42, duplicates 5
    ///   dropped: bad signature 2, not joined 1
    /// ```
    public func text(width: Int? = nil) -> String {
        var lines: [String] = []
        let addresses = node.addresses.isEmpty ? "" : "  addresses " + node.addresses.map(safe).joined(separator: ", ")
        lines.append(
            "\(safe(node.nick))  \(short(node.id))  port \(node.port)  up "
                + HumanFormat.duration(.milliseconds(node.uptimeMs)) + addresses)
        lines.append("data dir \(safe(node.dataDir))")
        switch node.mdns {
        case "off": lines.append("mDNS off (--no-mdns): friends are found by address (--peer) and through the peers they know")
        case "unavailable": lines.append("mDNS unavailable: no daemon answered at the start (huddle doctor says more)")
        default: break
        }
        if let paused = node.pausedMs {
            lines.append("paused \(HumanFormat.elapsed(.milliseconds(paused))): nothing new is shown until /resume")
        }
        if let listening {
            let source = listening.source == "file" ? "an audio file" : "the default input"
            let since = HumanFormat.clock(.milliseconds(sinceEpoch: listening.startedAt))
            lines.append("listening to \(source) since \(since)")
            let sharing = listening.sharing
            let now = sharing.to.isEmpty ? "kept here" : "sent to \(sharing.to.map(safe).joined(separator: ", ")) (\(sharing.now))"
            lines.append(
                "  sound shared: \(Int(sharing.sharedS)) s of \(Int(sharing.heardS)) s heard, "
                    + "sealed for each peer; the latest 2 s: \(now)")
            for (nick, match) in listening.peers.sorted(by: { $0.key < $1.key }) {
                let found = match.lagMs.map { lag in
                    let amount = HumanFormat.duration(.milliseconds(Int64(abs(lag).rounded())))
                    return "heard \(amount) \(lag >= 0 ? "later" : "earlier")"
                } ?? match.verdict
                lines.append("  \(safe(nick)): \(found) (confidence \(Int(match.confidence.rounded())))")
            }
        }

        lines.append("")
        lines.append("PEERS")
        if peers.isEmpty {
            lines.append("  none yet")
        } else {
            let rows = peers.map { peer in
                [
                    safe(peer.displayName ?? peer.nick), short(peer.id),
                    safe(peer.address) + (peer.syncAddress.map { " (pulls: \(safe($0)))" } ?? "")
                        + (peer.relay.map(Self.through) ?? ""), safe(peer.state),
                    peer.rttMs.map(Self.formatRTT) ?? "-",
                    peer.lastSeenMs.map { HumanFormat.duration(.milliseconds($0)) + " ago" } ?? "-",
                    peer.rooms.isEmpty ? "-" : peer.rooms.map(safe).joined(separator: ","), safe(peer.foundBy),
                ]
            }
            lines += TextTable(
                header: ["NICK", "ID", "ADDRESS", "STATE", "RTT", "LAST SEEN", "ROOMS", "FOUND BY"], rows: rows,
                droppable: [1, 7, 5]
            ).lines(indent: "  ", width: width)
        }

        for room in rooms {
            lines.append("")
            lines += roomLines(room, width: width)
        }
        if rooms.isEmpty {
            lines.append("")
            lines.append("ROOMS none (join one with /join ROOM in the node's console)")
        }

        lines.append("")
        lines.append(
            "COUNTERS packets in \(counters.packetsIn), out \(counters.packetsOut), rejected \(counters.rejected)"
                + (counters.newerProtocol > 0 ? " (\(counters.newerProtocol) from newer Huddle versions: upgrade)" : "")
                + ((counters.drops["older_protocol"] ?? 0) > 0
                    ? " (\(counters.drops["older_protocol"]!) from older Huddle versions: upgrade them)" : "")
                + "; events received \(counters.eventsReceived), stored \(counters.eventsStored)"
                + ", duplicates \(counters.duplicates)"
                + (counters.soundWindowsOut + counters.soundWindowsIn > 0
                    ? "; sound windows out \(counters.soundWindowsOut), in \(counters.soundWindowsIn)" : "")
                + (counters.withheld > 0 ? "; withheld from unproven addresses \(counters.withheld)" : ""))
        if !counters.drops.isEmpty {
            let drops = counters.drops.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
                .map { "\($0.key.replacingOccurrences(of: "_", with: " ")) \($0.value)" }
            lines.append("  dropped: " + drops.joined(separator: ", "))
        }
        return lines.joined(separator: "\n")
    }

    private func roomLines(_ room: Room, width: Int?) -> [String] {
        var lines: [String] = []
        let current = room.current ? " (current)" : ""
        // What the reader was shown: a count of everything held would rise with a line still
        // held back, and say that something was said.
        let shown = room.shownBy.values.reduce(0, +)
        let events = shown == 1 ? "1 event shown" : "\(shown) events shown"
        let waiting = room.waitingCount > 0 ? ", \(room.waitingCount) waiting for earlier events" : ""
        let sealed = room.privateID != nil ? " (private)" : ""
        // How many messages are held back is not said: a count that jumps tells that a big play is
        // coming (the JSON status keeps it for scripts).
        lines.append("ROOM \(safe(room.name))\(sealed)\(current): \(events)\(waiting)")
        if let score = room.score {
            let board = HumanFormat.score(
                home: UInt16(clamping: score.home), guest: UInt16(clamping: score.guest), homeName: score.homeTeam,
                guestName: score.guestTeam)
            lines.append("  score \(safe(board)) on this node's stream (by \(safe(score.by)))")
        }
        func nick(of id: String) -> String {
            room.members.first { $0.id == id }.map { safe($0.displayName ?? $0.nick) } ?? short(id)
        }
        let rows = room.members.map { member -> [String] in
            [
                safe(member.displayName ?? member.nick) + (member.id == node.id ? " (you)" : ""), short(member.id),
                streamText(member), member.calibrated ? (member.heard.map { "heard (\(Int($0.confidence.rounded())))" } ?? "yes") : "no",
            ]
        }
        if rows.isEmpty {
            lines.append("  nobody here")
        } else {
            lines += TextTable(header: ["NICK", "ID", "STREAM", "CALIBRATED"], rows: rows, droppable: [1])
                .lines(indent: "  ", width: width)
        }
        let byWriter = room.shownBy
            .map { (name: nick(of: $0.key), count: $0.value) }
            .sorted { $0.name < $1.name }
            .map { "\($0.name) \($0.count)" }
        lines.append("  shown by writer: " + (byWriter.isEmpty ? "nothing yet" : byWriter.joined(separator: ", ")))
        for (id, seq) in room.quarantined.sorted(by: { $0.key < $1.key }) {
            lines.append("  quarantined: \(nick(of: id)) signed two versions of its event #\(seq); nothing of it from there on")
        }
        return lines
    }

    /// Where the member's stream stands against this node's, as the console says it.
    private func streamText(_ member: RoomMember) -> String {
        guard member.offsetMs != nil else { return "not calibrated" }
        if member.id == node.id { return "yours" }
        return member.behindYouMs.map { HumanFormat.lag(.milliseconds($0)) } ?? "calibrated with others, not you"
    }

    /// How a peer reached through a relay reads beside its address.
    private static func through(_ relay: NodeStatus.Relay) -> String {
        ", reachable only through \(TerminalText.escaped(relay.nick))" + (relay.rttMs.map { " (\(formatRTT($0)))" } ?? "")
    }

    private static func formatRTT(_ milliseconds: Double) -> String {
        guard milliseconds.isFinite, milliseconds >= 0 else { return "-" }
        return String(format: milliseconds < 10 ? "%.2f ms" : "%.0f ms", milliseconds)
    }

    private func short(_ id: String) -> String { safe(String(id.prefix(12))) }

    private func safe(_ text: String) -> String { TerminalText.escaped(text) }
}
