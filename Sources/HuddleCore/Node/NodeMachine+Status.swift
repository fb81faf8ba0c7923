/// The status snapshot, decided here: what `huddle status` shows of the machine's state. The shell
/// renders it (text tables or JSON) and adds only what it alone knows.
extension NodeMachine {
    /// How many events the loaded rooms hold, together.
    public var heldEventCount: Int { rooms.sessions.reduce(0) { $0 + $1.log.count } }

    /// The node as `huddle status` shows it at `now`: the node, its peers, its rooms, its
    /// counters and what it hears. The shell adds what only it knows: its data dir, the host's
    /// addresses, how many events the store took and how many datagrams its rate limit refused.
    public func status(
        now: NodeTime, dataDir: String, addresses: [String], eventsStored: Int, rateLimited: Int
    ) -> NodeStatus {
        let wall = now.wall
        let monotonic = now.monotonic
        let peers = membership.peers.values.sorted { ($0.nick, $0.id) < ($1.nick, $1.id) }.map { peer in
            var status = NodeStatus.Peer(
                id: peer.id.hex, nick: peer.nick, displayName: displayName(of: peer), address: "\(peer.address)",
                syncAddress: peer.syncAddress == peer.address ? nil : "\(peer.syncAddress)", state: "\(peer.state)",
                rttMs: peer.rtt?.fractionalMilliseconds, lastSeenMs: max(.zero, monotonic - peer.lastSeen).milliseconds,
                rooms: peer.rooms, foundBy: "\(peer.foundBy)")
            status.trusted = membership.isTrusted(peer.address)
            if let (relay, roundTrip) = membership.relayPath(to: peer.id) {
                status.relay = NodeStatus.Relay(nick: relay.nick, rttMs: roundTrip?.fractionalMilliseconds)
            }
            return status
        }
        let roomStatuses = joined.map { name -> NodeStatus.Room in
            let session = rooms[name] ?? RoomSession(room: name, reader: identity.id)
            let members = session.offsetReport.entries.map { entry in
                let placement = session.calibration.placement(of: entry.member.id)
                return NodeStatus.RoomMember(
                    id: entry.member.id.hex, nick: entry.member.nick, displayName: entry.member.displayName,
                    offsetMs: entry.offset?.milliseconds,
                    calibrated: placement != nil, reference: placement?.reference.hex,
                    behindYouMs: entry.behindReader?.milliseconds,
                    heard: entry.heard.map { sound in
                        NodeStatus.Heard(
                            matches: sound.matches, confidence: (sound.confidence * 10).rounded() / 10,
                            sigmaMs: (Double(sound.sigma.microseconds) / 100).rounded() / 10)
                    })
            }
            var vector: [String: UInt64] = [:]
            for (origin, seq) in session.log.vector.entries { vector[origin.hex] = seq }
            var shownBy: [String: Int] = [:]
            for (origin, count) in session.shownCounts { shownBy[origin.hex] = count }
            var quarantined: [String: UInt64] = [:]
            for (origin, proof) in session.log.faults { quarantined[origin.hex] = proof.seq }
            return NodeStatus.Room(
                name: self.name(of: name), privateID: rooms[entry: name].key?.id, current: name == currentRoom, members: members, eventCount: session.log.count,
                heldBackCount: session.heldBackCount, versionVector: vector, shownBy: shownBy,
                waitingCount: session.log.waitingCount,
                quarantined: quarantined,
                score: session.scoreboard.map { board in
                    NodeStatus.Score(
                        home: Int(board.home), guest: Int(board.guest), by: board.by.nick, homeTeam: board.teams?.home,
                        guestTeam: board.teams?.guest)
                })
        }
        return NodeStatus(
            node: NodeStatus.Node(
                id: identity.id.hex, nick: nick, port: Int(port), addresses: addresses,
                uptimeMs: (wall - startedAt).milliseconds, dataDir: dataDir,
                pausedMs: pausedAt.map { (wall - $0).milliseconds }),
            peers: peers, rooms: roomStatuses,
            counters: countersStatus(eventsStored: eventsStored, rateLimited: rateLimited),
            listening: listening.map { listening in
                func nick(_ peer: NodeID) -> String {
                    membership.peers[peer].map(displayName(of:)) ?? peer.description
                }
                var matches: [String: NodeStatus.Match] = [:]
                for (peer, attempt) in listening.attempts {
                    matches[nick(peer)] = NodeStatus.Match(
                        verdict: attempt.verdict, lagMs: attempt.lag?.fractionalMilliseconds,
                        confidence: (attempt.confidence * 10).rounded() / 10)
                }
                let sharing = listening.sharing
                return NodeStatus.Listening(
                    source: listening.source, startedAt: listening.startedAt.millisecondsSinceEpoch, peers: matches,
                    sharing: NodeStatus.Sharing(
                        now: sharing.reason.rawValue, to: sharing.latestPeers.map(nick), heardS: sharing.heardSeconds,
                        sharedS: sharing.sharedSeconds,
                        sharedWith: Dictionary(sharing.sharedWith.map { (nick($0.key), $0.value) }, uniquingKeysWith: +)))
            })
    }

    /// The counters, with what each room's log gave up on and what the rate limit refused added
    /// to the drops.
    func countersStatus(eventsStored: Int, rateLimited: Int) -> NodeStatus.Counters {
        var drops: [String: Int] = [:]
        for (drop, count) in counters.drops where drop != .duplicate { drops[drop.rawValue] = count }
        let abandoned = rooms.sessions.reduce(0) { $0 + $1.tally.abandoned }
        let expired = rooms.sessions.reduce(0) { $0 + $1.tally.droppedAhead }
        if abandoned > 0 { drops["unmet_context"] = abandoned }
        if expired > 0 { drops["gap_expired"] = expired }
        if rateLimited > 0 { drops["rate_limited"] = rateLimited }
        return NodeStatus.Counters(
            packetsIn: counters.packetsIn, packetsOut: counters.packetsOut,
            rejected: drops.values.reduce(0, +), newerProtocol: counters.newerProtocol,
            eventsReceived: counters.eventsReceived, eventsStored: eventsStored,
            duplicates: counters.drops[.duplicate] ?? 0, soundWindowsOut: counters.soundWindowsOut,
            soundWindowsIn: counters.soundWindowsIn, withheld: counters.withheld, drops: drops)
    }
}
