/// Nicks and pause: telling nodes apart by more than their nick, and a viewer pausing the stream.
///
/// **Nicks** are free text anyone can pick, so the node remembers the first node it saw under
/// each nick (in the store, like SSH's known hosts). A later node with the same nick is shown as
/// `nick#abcd` everywhere, and the reader is warned once; two members of one room with one nick
/// are both shown with their ids.
///
/// **Pause**: `/pause` and `/resume` (Ctrl-S and Ctrl-Q on the console), timed at the keypress
/// like a mark. While paused, no message is shown. On resume the paused span becomes this
/// viewer's delay nudge in every room where it is calibrated (gossiped like `/delay`), so held
/// messages are re-timed by it here, and peers ahead hold their messages for it that much longer.
/// A room where the viewer is not calibrated gets no nudge: its later marks measure the lag as
/// it is.
extension NodeMachine {
    /// A peer's nick as people see it: `nick#3f9a0c1e` when the nick was first seen with
    /// another node, or another live peer goes by it too (see ``Member/displayName``).
    public func displayName(of peer: Peer) -> String {
        let firstSeen = knownNicks[peer.nick]
        let shared = membership.peers.values.contains { $0.id != peer.id && $0.nick == peer.nick && $0.state != .gone }
        return Member(id: peer.id, nick: peer.nick, sharesNick: shared || (firstSeen != nil && firstSeen != peer.id))
            .displayName
    }

    /// A member joined a room: remember its nick if new, or warn if the nick was first seen
    /// with another node.
    mutating func noticeNick(_ member: Member, now: NodeTime) {
        guard member.id != identity.id, !member.nick.isEmpty else { return }
        switch knownNicks[member.nick] {
        case nil:
            knownNicks[member.nick] = member.id
            emit(.persist(.nick(member.nick, member.id, at: now.wall)))
            // Keys copied first: iterating the dictionary while changing it would copy every session.
            for room in rooms.loaded { rooms[room]?.knownNicks = knownNicks }
        case let known? where known != member.id:
            guard nickConflicts.insert(member.id).inserted else { return }
            show(.nickConflict(member, knownID: known))
        default:
            return
        }
    }

    // MARK: Pause

    mutating func pause(at: WallTime, now: NodeTime) {
        if let pausedAt {
            return say(.paused(alreadyFor: at - pausedAt))
        }
        pausedAt = at
        for room in rooms.loaded { rooms[room]?.pause() }
        say(.paused(alreadyFor: nil))
    }

    mutating func resume(at: WallTime, now: NodeTime) {
        guard let pausedAt else { return say(.notPaused) }
        let span = max(.zero, at - pausedAt)
        self.pausedAt = nil
        var nudged: [String] = []
        for room in joined where rooms[entry: room].directPeer == nil && rooms[room]?.calibration.isCalibrated(identity.id) == true {
            if originate(.delayNudge(milliseconds: span.milliseconds), in: room, at: at, now: now) != nil {
                nudged.append(name(of: room))
            }
        }
        for room in rooms.loaded {
            let outputs = withRoom(room, now: now) { $0.resume(now: now.wall) }
            show(outputs, room: room, now: now)
        }
        say(.resumed(after: span, rooms: nudged))
    }
}
