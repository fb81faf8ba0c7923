import HuddleCore

/// Telling nodes apart by more than their nick. Nicks are free text anyone can pick, so the node
/// remembers the first node it saw under each nick (in the store, like SSH's known hosts). A later
/// node with the same nick is shown as `nick#abcd` everywhere, and the reader is warned once;
/// two members of one room with one nick are both shown with their ids.
extension Node {
    /// Loads the nicks seen before, with this node's own nick claimed first.
    func loadKnownNicks() {
        do {
            try store.rememberNick(configuration.nick, id: identity.id, at: clock.wallMillis())
            knownNicks = try store.knownNicks()
        } catch {
            logger.error("could not load known nicks", metadata: ["huddle.error": "\(error)"])
        }
    }

    /// A peer's nick as people see it: `nick#3f9a0c1e` when the nick was first seen with
    /// another node, or another live peer goes by it too (see ``Member/displayName``).
    func displayName(of peer: Peer) -> String {
        let firstSeen = knownNicks[peer.nick]
        let shared = membership.peers.values.contains { $0.id != peer.id && $0.nick == peer.nick && $0.state != .gone }
        return Member(id: peer.id, nick: peer.nick, sharesNick: shared || (firstSeen != nil && firstSeen != peer.id))
            .displayName
    }

    /// A member joined a room: remember its nick if new, or warn if the nick was first seen
    /// with another node.
    func noticeNick(_ member: Member) {
        guard member.id != identity.id, !member.nick.isEmpty else { return }
        switch knownNicks[member.nick] {
        case nil:
            do {
                knownNicks[member.nick] = try store.rememberNick(member.nick, id: member.id, at: clock.wallMillis())
            } catch {
                logger.error("could not remember a nick", metadata: ["huddle.error": "\(error)"])
                knownNicks[member.nick] = member.id
            }
            // Keys copied first: iterating the dictionary while changing it would copy every session.
            for room in Array(rooms.keys) { rooms[room]?.knownNicks = knownNicks }
        case let known? where known != member.id:
            guard nickConflicts.insert(member.id).inserted else { return }
            show(renderer.nickConflict(member, knownID: known))
        default:
            return
        }
    }
}
