/// Goodbyes: a node that stops on purpose (`/quit`, end of input, SIGTERM) says so in a signed
/// ``Leaving``, and its peers take it as gone at once, as having *left*, instead of suspecting it
/// for seconds and then declaring it gone.
extension Membership {
    /// A peer's signed goodbye (the shell checked the signature). It names the incarnation that
    /// ends: one below what the peer has signed since (a copy replayed after it started again)
    /// changes nothing. Reports ``MembershipDirective/peerLeft(id:nick:)``.
    public mutating func receive(_ leaving: Leaving, now: MonotonicTime) -> [MembershipDirective] {
        guard leaving.from != me, let peer = peers[leaving.from], peer.state != .gone,
            leaving.incarnation >= peer.vouched
        else { return [] }
        peers[leaving.from]?.vouched = leaving.incarnation
        let changes = setState(leaving.from, .gone, incarnation: max(peer.incarnation, leaving.incarnation), now: now)
        return changes.map { change in
            guard case .peerChanged(let id, let nick, _, .gone) = change else { return change }
            return .peerLeft(id: id, nick: nick)
        }
    }
}
