/// When piped input ends, the node waits until a peer is known to hold what it wrote (see
/// ``DeliveryWait``). The machine keeps the wait, hears what shows a peer holds its events, and
/// asks live peers for its own latest event back; the shell polls it and says the outcome.
extension NodeMachine {
    /// The rooms this node wrote in since `before` (``ownSeqs()`` then), with its latest seq.
    public func written(since before: [String: UInt64]) -> [String: UInt64] {
        ownSeqs().filter { $0.value > (before[$0.key] ?? 0) }
    }

    /// Starts waiting for `written` to be held by a peer.
    public mutating func startDeliveryWait(
        _ written: [String: UInt64], now: NodeTime, timeout: TimeSpan = DeliveryWait.timeout
    ) {
        deliveryWait = DeliveryWait(written: written, now: now.wall, timeout: timeout)
    }

    /// Where the wait stands; asks live peers for this node's events back meanwhile (as pulls).
    /// `peersPossible`: whether any peer could still be found (seeds, mDNS, peers known).
    public mutating func pollDelivery(now: NodeTime, peersPossible: Bool) -> DeliveryWait.Step? {
        guard var wait = deliveryWait else { return nil }
        let live = Dictionary(uniqueKeysWithValues: wait.written.keys.map { ($0, roomPeers($0)) })
        let step = wait.poll(now: now.wall, livePeers: live, peersPossible: peersPossible || !membership.peers.isEmpty)
        deliveryWait = wait
        if case .ask(let asks) = step {
            for ask in asks {
                schedulePull(PullRequest(
                    room: ask.room, peer: ask.peer.id, address: ask.peer.syncAddress, recheck: identity.id, from: ask.seq,
                    confirm: true))
            }
        }
        switch step {
        case .delivered, .giveUp: deliveryWait = nil
        case .ask, .wait: break
        }
        return step
    }

    /// `peer` is known to hold this node's events of `room` up to `seq`.
    mutating func noteHeld(room: String, seq: UInt64, by peer: NodeID) {
        guard seq > 0, deliveryWait != nil else { return }
        deliveryWait?.heard(room: room, seq: seq, from: membership.peers[peer]?.nick ?? "\(peer)")
    }
}
