/// When piped input ends, the node waits until a peer is known to hold what it wrote (see
/// ``DeliveryWait``), through the door like everything else: ``NodeInput/inputEnded(peersFindable:)``
/// starts the wait, every input after it (a digest, a pull's batch, a peer found, the clock at
/// ``DeliveryWait/nextPoll``) may end it, and ``NodeEffect/delivery(_:)`` says that it waits and
/// how it ended.
extension NodeMachine {
    /// The rooms this node wrote in since it started (``ownSeqs()`` then), with its latest seq.
    public var writtenSinceStart: [String: UInt64] {
        ownSeqs().filter { $0.value > (rooms[entry: $0.key].ownSeqAtStart ?? 0) }
    }

    /// Piped input ended: waits for a peer to hold what was written since the start, or says
    /// at once that nothing was. Said again while it waits, with `peersFindable` false: what could
    /// find a peer stopped working, so the wait ends at once if no peer is known.
    mutating func inputEnded(peersFindable: Bool, now: NodeTime) {
        guard deliveryWait == nil else {
            if !peersFindable { deliveryWait?.noPeerFindable() }
            return
        }
        let written = writtenSinceStart
        guard !written.isEmpty else { return emit(.delivery(.nothingWritten)) }
        deliveryWait = DeliveryWait(written: written, now: now.wall, peersFindable: peersFindable)
        emit(.delivery(.waiting(DeliveryWait.timeout)))
    }

    /// The node is stopping while it waits: what it wrote is not known to be anywhere else.
    mutating func stopWaiting() {
        guard deliveryWait != nil else { return }
        deliveryWait = nil
        emit(.delivery(.notSent(.stopped)))
    }

    /// Where the wait stands, after each input: asks live peers for this node's events back (as
    /// pulls) when it is time, and ends it when a peer holds them all or it gives up.
    mutating func pollDelivery(now: NodeTime) {
        guard var wait = deliveryWait else { return }
        let live = Dictionary(uniqueKeysWithValues: wait.written.keys.map { ($0, roomPeers($0)) })
        let step = wait.poll(now: now.wall, livePeers: live, peersPossible: wait.peersFindable || !membership.peers.isEmpty)
        deliveryWait = wait
        switch step {
        case .ask(let asks):
            for ask in asks {
                schedulePull(PullRequest(
                    room: ask.room, peer: ask.peer.id, address: ask.peer.syncAddress, recheck: identity.id, from: ask.seq,
                    confirm: true))
            }
        case .wait: break
        case .delivered(let nicks):
            deliveryWait = nil
            emit(.delivery(.delivered(to: nicks)))
        case .giveUp(let reason):
            deliveryWait = nil
            emit(.delivery(.notSent(reason)))
        }
    }

    /// `peer` is known to hold this node's events of `room` up to `seq`.
    mutating func noteHeld(room: String, seq: UInt64, by peer: NodeID) {
        guard seq > 0, deliveryWait != nil else { return }
        deliveryWait?.heard(room: room, seq: seq, from: membership.peers[peer]?.nick ?? "\(peer)")
    }
}
