/// Rooms on the node: loading a room's session from what the store held, joining, leaving,
/// writing an event, and showing what a room shows.
extension NodeMachine {
    /// Loads a room's session (after a restart or a re-join) unless it is loaded.
    mutating func loadRoom(_ room: String, now: NodeTime) {
        guard rooms[room] == nil else { return }
        var session = RoomSession(room: room, reader: identity.id, key: rooms[entry: room].key, shield: shield)
        session.knownNicks = knownNicks
        if pausedAt != nil { session.pause() }
        // A direct room's stored messages wait by the offsets of a room the two share.
        if rooms[entry: room].directPeer != nil { _ = session.follow(sharedCalibration(forDirect: room), now: now.wall) }
        var outputs: [RoomOutput] = []
        if let held = rooms[entry: room].stored {
            rooms[entry: room].stored = nil
            outputs = session.restore(held.events, faults: held.faults, shown: held.shown, now: now.wall)
            // Pictures of messages still to show: one shown before may have gone for the quota.
            for event in held.events where event.origin != identity.id && !held.shown.contains(event.id) {
                guard let picture = session.opened(event)?.body.picture else { continue }
                wantStoredPicture(picture, of: event.origin, room: room, now: now)
            }
        }
        rooms[room] = session
        show(outputs, room: room, now: now)
    }

    /// Runs `body` on the room's session in place. Copying a session out of `rooms` and back
    /// would copy its whole log on every change (the dictionary would still hold a reference).
    mutating func withRoom<T>(_ room: String, now: NodeTime, _ body: (inout RoomSession) throws -> T) rethrows -> T {
        loadRoom(room, now: now)
        return try body(&rooms[room]!)
    }

    /// Makes this node's next event in `room`: stores it (committed before anyone sees it), shows
    /// what it shows and pushes it to the room's live peers. The event is stamped `at` (a mark:
    /// when its key arrived), or now. `nil` when the room refused it (said to the reader).
    ///
    /// Its seq is leased (``SeqLease``): the lease, when it runs low, is synced to disk with the
    /// event, and the event is committed before anyone sees it, so neither a `kill -9` nor a
    /// power cut makes this node sign another event with its seq (which peers would take as
    /// equivocation). After a power cut, its first event in the room voids what it lost.
    @discardableResult
    public mutating func originate(_ body: EventBody, in room: String, at: WallTime? = nil, now: NodeTime) -> Event? {
        originate(body, in: room, at: at, after: 0, now: now)
    }

    /// ``originate(_:in:at:now:)`` past `leased`: the seq the node may have used last, for a void.
    @discardableResult
    mutating func originate(_ body: EventBody, in room: String, at: WallTime?, after leased: UInt64, now: NodeTime) -> Event? {
        voidWhatWasLost(in: room, now: now)
        let made: (event: Event, outputs: [RoomOutput])
        let signer = identity
        do {
            made = try withRoom(room, now: now) { try $0.compose(body, now: at ?? now.wall, signer: signer, after: leased) }
        } catch {
            reject(.notSent("\(error)"))
            return nil
        }
        if let through = rooms[entry: room].lease.extend(for: made.event.seq) {
            emit(.persist(.lease(room: room, through: through)))
        }
        emit(.persist(.events([made.event], own: true)))
        awaitCommit(of: made.event)
        show(made.outputs, room: room, now: now)
        push([made.event], room: room)
        perform(replication.originated(made.event, state: replicationState(room), now: now.monotonic), now: now)
        return made.event
    }

    /// After a power cut (``NodeRestore/lostUnsynced``), this node's first event in `room` is a
    /// void of the leased seqs past what it holds: it may have sent some of them, and cannot sign
    /// them again (``EventBody/voided(from:)``).
    mutating func voidWhatWasLost(in room: String, now: NodeTime) {
        guard rooms[entry: room].lease.mayHaveLost else { return }
        rooms[entry: room].lease.mayHaveLost = false
        let id = identity.id
        let held = withRoom(room, now: now) { $0.log.vector[id] }
        let leased = rooms[entry: room].lease.through
        guard leased > held else { return }
        originate(.voided(from: held + 1), in: room, at: nil, after: leased, now: now)
    }

    /// Joins public room `room` (a join event resets this node's calibration there) and makes it
    /// current; a private room of that name this node is in is made current instead.
    public mutating func join(_ room: String, now: NodeTime) {
        if let joinedRoom = joinedRoom(named: room) { return enter(joinedRoom, now: now) }
        if let problem = RoomName.problem(with: room) { return reject(.invalid(problem)) }
        enter(room, now: now)
    }

    /// Joins `room` (a public name or a private room's id) and makes it current.
    mutating func enter(_ room: String, now: NodeTime) {
        if joined.contains(room) {
            makeCurrent(room)
            say(.talkingIn(room: name(of: room)))
            return
        }
        loadRoom(room, now: now)
        joined.append(room)
        currentRoom = room
        emit(.persist(.joined(room, true)))
        emit(.persist(.currentRoom(room)))
        advertiseRooms()
        originate(.join(nick: nick), in: room, now: now)
        perform(replication.joined(room: room, peers: membership.alivePeers(inRoom: room)), now: now)
    }

    public mutating func leave(_ room: String, now: NodeTime) {
        guard joined.contains(room) else { return reject(.notIn(room: name(of: room))) }
        originate(.leave, in: room, now: now)
        replication.left(room: room)
        joined.removeAll { $0 == room }
        advertiseRooms()
        if currentRoom == room { currentRoom = joined.last { rooms[entry: $0].directPeer == nil } }
        emit(.persist(.joined(room, false)))
        emit(.persist(.currentRoom(currentRoom)))
        say(.left(room: name(of: room), nowIn: currentRoom.map(name(of:))))
        followSharedCalibrations(now: now)
    }

    mutating func makeCurrent(_ room: String) {
        currentRoom = room
        emit(.persist(.currentRoom(room)))
    }

    /// The joined room people call `name`: a private room of that name first, else the public one.
    public func joinedRoom(named name: String) -> String? {
        joined.first { rooms[entry: $0].key?.name == name } ?? (joined.contains(name) ? name : nil)
    }

    /// Puts the joined rooms in probes and in the mDNS TXT record (private ones by id only).
    /// Direct rooms are not advertised: that would tell everyone who writes to whom, and the
    /// other side is pushed to directly (``roomPeers(_:)``).
    mutating func advertiseRooms() {
        let advertised = joined.filter { rooms[entry: $0].directPeer == nil }
        membership.rooms = advertised
        emit(.advertise(rooms: advertised))
    }

    /// Where a room's events go: its live peers, and for a direct room the other side even
    /// before it has entered the room (its first message is what makes it enter).
    public func roomPeers(_ room: String) -> [Peer] {
        var peers = membership.alivePeers(inRoom: room)
        if let other = rooms[entry: room].directPeer, let peer = membership.peers[other], peer.state != .gone,
            !peers.contains(where: { $0.id == other })
        {
            peers.append(peer)
        }
        return peers
    }

    /// What replication needs to know of a joined room.
    func replicationState(_ room: String) -> Replication.RoomState {
        Replication.RoomState(peers: roomPeers(room), log: rooms[room]?.log)
    }

    /// A room's version vector (empty for a room not loaded).
    public func vector(of room: String) -> VersionVector {
        rooms[room]?.log.vector ?? VersionVector()
    }

    /// This node's latest seq in each loaded room.
    public func ownSeqs() -> [String: UInt64] {
        Dictionary(uniqueKeysWithValues: rooms.sessions.map { ($0.room, $0.log.vector[identity.id]) })
    }

    // MARK: Showing

    /// Shows a room's outputs, recording shown messages first so a restart never shows them again.
    mutating func show(_ outputs: [RoomOutput], room: String, now: NodeTime) {
        let isDirect = rooms[entry: room].directPeer != nil
        let outputs = markMissingPictures(isDirect ? directOutputs(outputs) : outputs, room: room)
        guard !outputs.isEmpty else { return }
        let shownIDs = outputs.flatMap { output -> [EventID] in
            switch output {
            case .message(let message): [message.event.id]
            case .earlier(let items): items.map(\.event.id)
            case .score(let score): [score.event.id]
            default: []
            }
        }
        if !shownIDs.isEmpty { emit(.persist(.shown(shownIDs, room: room, at: now.wall))) }
        let isPrivate = !isDirect && rooms[entry: room].key != nil
        var line = RoomLine(
            room: room, name: name(of: room), label: isPrivate ? privateLabel(of: room) : name(of: room),
            isPrivate: isPrivate, isCurrent: room == currentRoom)
        for output in outputs {
            if case .joined(let member) = output {
                noticeNick(member, now: now)
                // A join resets the member's calibration: the next match about it is news.
                hearing.publishing.peerJoined(member.id)
            }
            line.directTo = nil
            if isDirect, case .message(let message) = output { line.directTo = directRecipient(of: message, in: room) }
            show(.room(output, line))
        }
        // Direct messages are held back by the offsets of a room the two share: offsets and
        // members change with what a room shows.
        if !isDirect, rooms.entries.values.contains(where: { $0.directPeer != nil }) { followSharedCalibrations(now: now) }
    }
}
