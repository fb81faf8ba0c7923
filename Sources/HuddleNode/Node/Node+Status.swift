import Foundation
import HuddleCore
import NIOCore

extension Node {
    /// Answers a request from the control socket (`huddle status`, `huddle send`).
    func handleControl(_ request: ControlRequest) async -> ControlResponse {
        switch request {
        case .status:
            return .status(status())
        case .send(let name, let text):
            switch await step({ machine, now in machine.say(text, inRoomNamed: name, now: now) }) {
            case .success(let event):
                let pushedTo = machine.roomPeers(event.room).map(\.nick).sorted()
                return .sent(id: "\(event.origin.hex)#\(event.seq)", room: machine.name(of: event.room), pushedTo: pushedTo)
            case .failure(let refusal): return .error(refusal.description)
            }
        case .command(let name, let line, let json):
            let (refusal, shown) = await stepShowing { machine, now in
                machine.controlLine(line, inRoomNamed: name, at: now.wall, now: now)
            }
            if let refusal { return .error(refusal.description) }
            let renderer = OutputRenderer(json: json, colors: false)
            return .said(shown.compactMap { rendered($0, by: renderer) })
        case .sendDirect(let target, let text):
            let trimmed = text.trimmingWhitespace()
            guard !trimmed.isEmpty else { return .error("nothing to send") }
            switch await step({ machine, now in machine.sendDirect(to: target, text: trimmed, now: now) }) {
            case .success(let event): return .sent(id: "\(event.origin.hex)#\(event.seq)")
            case .failure(let problem): return .error(problem.description)
            }
        }
    }

    func status() -> NodeStatus {
        let machine = self.machine
        let membership = machine.membership
        let wall = clock.wall()
        let monotonic = clock.monotonic()
        let peers = membership.peers.values.sorted { ($0.nick, $0.id) < ($1.nick, $1.id) }.map { peer in
            var status = NodeStatus.Peer(
                id: peer.id.hex, nick: peer.nick, displayName: machine.displayName(of: peer), address: "\(peer.address)",
                syncAddress: peer.syncAddress == peer.address ? nil : "\(peer.syncAddress)", state: "\(peer.state)",
                rttMs: peer.rtt?.fractionalMilliseconds, lastSeenMs: max(.zero, monotonic - peer.lastSeen).milliseconds,
                rooms: peer.rooms, foundBy: "\(peer.foundBy)")
            status.trusted = membership.isTrusted(peer.address)
            if membership.route(to: peer.id).relay != nil { status.path = membership.pathSummary(of: peer.id) }
            return status
        }
        let roomStatuses = machine.joined.map { name -> NodeStatus.Room in
            let session = machine.rooms[name] ?? RoomSession(room: name, reader: identity.id)
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
            var quarantined: [String: UInt64] = [:]
            for (origin, proof) in session.log.faults { quarantined[origin.hex] = proof.seq }
            return NodeStatus.Room(
                name: machine.name(of: name), privateID: machine.keys[name]?.id, current: name == machine.currentRoom, members: members, eventCount: session.log.count,
                heldBackCount: session.heldBackCount, versionVector: vector, waitingCount: session.log.waitingCount,
                quarantined: quarantined,
                score: session.scoreboard.map { board in
                    NodeStatus.Score(
                        home: Int(board.home), guest: Int(board.guest), by: board.by.nick, homeTeam: board.teams?.home,
                        guestTeam: board.teams?.guest)
                })
        }
        return NodeStatus(
            node: NodeStatus.Node(
                id: identity.id.hex, nick: configuration.nick, port: port, addresses: Self.localAddresses(),
                uptimeMs: (wall - machine.startedAt).milliseconds, dataDir: configuration.dataDir,
                pausedMs: machine.pausedAt.map { (wall - $0).milliseconds }),
            peers: peers, rooms: roomStatuses,
            counters: countersStatus(),
            listening: machine.listening.map { listening in
                func nick(_ peer: NodeID) -> String {
                    membership.peers[peer].map(machine.displayName(of:)) ?? peer.description
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

    /// The counters, with what each room's log gave up on added to the drops.
    func countersStatus() -> NodeStatus.Counters {
        let counters = machine.counters
        var drops: [String: Int] = [:]
        for (drop, count) in counters.drops where drop != .duplicate { drops[drop.rawValue] = count }
        let abandoned = machine.rooms.values.reduce(0) { $0 + $1.tally.abandoned }
        let expired = machine.rooms.values.reduce(0) { $0 + $1.tally.droppedAhead }
        if abandoned > 0 { drops["unmet_context"] = abandoned }
        if expired > 0 { drops["gap_expired"] = expired }
        let limited = machine.admission.refused
        if limited > 0 { drops["rate_limited"] = limited }
        return NodeStatus.Counters(
            packetsIn: counters.packetsIn, packetsOut: counters.packetsOut,
            rejected: drops.values.reduce(0, +), newerProtocol: counters.newerProtocol,
            eventsReceived: counters.eventsReceived, eventsStored: writer.eventsStored,
            duplicates: counters.drops[.duplicate] ?? 0, soundWindowsOut: counters.soundWindowsOut,
            soundWindowsIn: counters.soundWindowsIn, withheld: counters.withheld, drops: drops)
    }

    /// The IPv4 and IPv6 addresses of this host's interfaces, loopback last.
    static func localAddresses() -> [String] {
        guard let devices = try? System.enumerateDevices() else { return [] }
        let addresses = devices.compactMap { device -> String? in
            guard let address = device.address, let ip = address.ipAddress else { return nil }
            if case .v6 = address, ip.hasPrefix("fe80") { return nil }
            return ip
        }
        let unique = Array(Set(addresses))
        return unique.filter { !$0.hasPrefix("127.") && $0 != "::1" }.sorted()
            + unique.filter { $0.hasPrefix("127.") || $0 == "::1" }.sorted()
    }
}
