import HuddleCore

/// Private rooms on the node: the keys it holds, the names people see, and joining with a
/// passphrase. A private room is keyed everywhere inside the node by its wire id
/// (``RoomKey/id``); only what a person reads says its name.
extension Node {
    /// The name people know `room` by: its own name for a public room or a private room this
    /// node has the key of, else "private room ~abcde" (the start of its id).
    func name(of room: String) -> String {
        // A direct room is named for the peer as people tell it apart: @alice#3f9a0c1e for a
        // new key calling itself alice.
        if let other = directs[room], let peer = membership.peers[other] { return "@" + displayName(of: peer) }
        if let key = keys[room] { return key.name }
        return RoomKey.isPrivate(room) ? "private room \(room.prefix(6))" : room
    }

    /// ``name(of:)`` with "(private)" after a room this node holds the key of, as lines for
    /// people say it: "superbowl (private)", apart from a public superbowl.
    func privateLabel(of room: String) -> String {
        keys[room] != nil ? "\(name(of: room)) (private)" : name(of: room)
    }

    /// The names of the private rooms this node is in but cannot open this run.
    func lockedNames() -> [String] {
        locked.compactMap { try? store.privateRoomName($0) }
    }

    /// The joined room people call `name`: a private room of that name first, else the public one.
    func joinedRoom(named name: String) -> String? {
        joined.first { keys[$0]?.name == name } ?? (joined.contains(name) ? name : nil)
    }

    /// Derives a private room's key off the actor (scrypt takes about 0.2 s on purpose).
    nonisolated static func deriveKey(room: String, passphrase: String) async throws -> RoomKey {
        try await Task.detached(priority: .userInitiated) { try RoomKey(room: room, passphrase: passphrase) }.value
    }

    /// Joins the private room this key opens and makes it current. A room this node was in
    /// before a restart opens again where it was (no new join event, so calibration stays).
    func join(_ key: RoomKey) {
        keys[key.id] = key
        try? store.setPrivateRoomName(key.id, key.name)
        if let index = locked.firstIndex(of: key.id) {
            locked.remove(at: index)
            loadRoom(key.id)
            joined.append(key.id)
            advertiseRooms()
            makeCurrent(key.id)
            showNotice("opened private room \(key.name) again")
            perform(replication.joined(room: key.id, peers: membership.alivePeers(inRoom: key.id)))
            return
        }
        enter(key.id)
    }

    /// `/private ROOM`: asks for the passphrase at a hidden prompt on the interactive console,
    /// or reads it from the next line of stdin.
    func askPassphrase(for room: String) {
        if let problem = RoomName.problem(with: room) { return showError(problem) }
        passphraseWanted = room
        if let console {
            console.askSecret("passphrase for \(room)")
        } else {
            showInfo("the next line is the passphrase for \(room)")
        }
    }

    /// What answered ``askPassphrase(for:)`` (`nil`: the prompt was given up).
    func passphraseEntered(_ passphrase: String?) async {
        guard let room = passphraseWanted else { return }
        passphraseWanted = nil
        guard let passphrase, !passphrase.isEmpty else { return showNotice("not joined \(room): no passphrase given") }
        do {
            join(try await Self.deriveKey(room: room, passphrase: passphrase))
        } catch {
            showError("could not derive the key for \(room): \(error)")
        }
    }

    /// Puts the joined rooms in probes and in the mDNS TXT record (private ones by id only).
    /// Direct rooms are not advertised: that would tell everyone who writes to whom, and the
    /// other side is pushed to directly (``roomPeers(_:)``).
    func advertiseRooms() {
        let advertised = joined.filter { directs[$0] == nil }
        membership.rooms = advertised
        discovery?.update(rooms: advertised)
    }

    func makeCurrent(_ room: String) {
        currentRoom = room
        try? store.setCurrentRoom(room)
        refreshConsole()
    }

    // MARK: Cards: what probes and acks carry for privacy

    /// A probe or ack of this node with its card filled in: its X25519 key for direct messages,
    /// and a name check beside each private room (see ``RoomKey/nameTag(for:room:)``).
    func withCard(_ message: WireMessage) -> WireMessage {
        func tags(_ rooms: [String]) -> [[UInt8]] {
            rooms.map { keys[$0]?.nameTag(for: identity.id, room: $0) ?? WireLimits.noRoomTag }
        }
        switch message {
        case .probe(var probe):
            probe.agreementKey = identity.agreementPublicKey
            probe.roomTags = tags(probe.rooms)
            return .probe(probe)
        case .ack(var ack):
            ack.agreementKey = identity.agreementPublicKey
            ack.roomTags = tags(ack.rooms)
            return .ack(ack)
        default:
            return message
        }
    }

    /// Reads a peer's card from its signed probe or ack: its agreement key, and whether it is in
    /// a private room of the same name as one of this node's under another passphrase, which is
    /// said once per peer and room, and at most three times a minute per room: fresh keys cost
    /// nothing, and anyone who guesses a room's name could otherwise fill the screen. With
    /// nobody sharing this node's passphrase yet, this node's is taken to be the wrong one.
    func read(card agreementKey: [UInt8], roomTags: [[UInt8]], rooms: [String], of peer: NodeID, nick: String) {
        if agreementKey != WireLimits.noAgreementKey { learned(agreementKey: agreementKey, of: peer, nick: nick) }
        for (room, tag) in zip(rooms, roomTags) where tag != WireLimits.noRoomTag {
            for key in keys.values where joined.contains(key.id) {
                let mismatch = PassphraseMismatch(peer: peer, room: key.id)
                let now = clock.wallMillis()
                let recent = (passphraseMismatchesTold[key.id] ?? []).filter { now - $0 < Self.passphraseMismatchWindow }
                guard key.isSameNameOtherPassphrase(tag, from: peer, room: room),
                    !passphraseMismatches.contains(mismatch), recent.count < Self.passphraseMismatchesPerWindow
                else { continue }
                passphraseMismatchesTold[key.id] = recent + [now]
                if passphraseMismatches.count < Self.maximumPassphraseMismatches { passphraseMismatches.insert(mismatch) }
                if membership.alivePeers(inRoom: key.id).isEmpty {
                    showError("wrong passphrase for \(key.name)? \(nick) is in a \(key.name) with another one")
                } else {
                    showNotice("\(nick) has another passphrase for \(key.name): you cannot read each other")
                }
            }
        }
    }
}

extension Node {
    /// How often, at most, a node says that someone holds another passphrase for one room:
    /// three times a minute.
    static let passphraseMismatchWindow: Int64 = 60_000
    static let passphraseMismatchesPerWindow = 3
    /// Most (peer, room) pairs remembered as told.
    static let maximumPassphraseMismatches = 256
}

/// A peer found in a private room of the same name as one of this node's, under another
/// passphrase.
struct PassphraseMismatch: Hashable {
    var peer: NodeID
    var room: String
}
