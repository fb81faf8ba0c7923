/// Private rooms on the node: the keys it holds, the names people see, and joining with a
/// passphrase. A private room is keyed everywhere inside the node by its wire id
/// (``RoomKey/id``); only what a person reads says its name.
extension NodeMachine {
    /// The name people know `room` by: its own name for a public room or a private room this
    /// node has the key of, else "private room ~abcde" (the start of its id).
    public func name(of room: String) -> String {
        // A direct room is named for the peer as people tell it apart: @alice#3f9a0c1e for a
        // new key calling itself alice.
        if let other = rooms[entry: room].directPeer, let peer = membership.peers[other] { return "@" + displayName(of: peer) }
        if let key = rooms[entry: room].key { return key.name }
        return RoomKey.isPrivate(room) ? "private room \(room.prefix(6))" : room
    }

    /// ``name(of:)`` with "(private)" after a room this node holds the key of, as lines for
    /// people say it: "superbowl (private)", apart from a public superbowl.
    public func privateLabel(of room: String) -> String {
        rooms[entry: room].key != nil ? "\(name(of: room)) (private)" : name(of: room)
    }

    /// Joins the private room this key opens and makes it current. A room this node was in
    /// before a restart opens again where it was (no new join event, so calibration stays).
    public mutating func join(key: RoomKey, now: NodeTime) {
        rooms[entry: key.id].key = key
        rooms[entry: key.id].privateName = key.name
        emit(.persist(.privateRoomName(id: key.id, name: key.name)))
        if rooms[entry: key.id].locked {
            rooms[entry: key.id].locked = false
            loadRoom(key.id, now: now)
            joined.append(key.id)
            advertiseRooms()
            makeCurrent(key.id)
            say(.reopened(room: key.name))
            perform(replication.joined(room: key.id, peers: membership.alivePeers(inRoom: key.id)), now: now)
            return
        }
        enter(key.id, now: now)
    }

    /// `/private ROOM`: asks the shell for the passphrase (a hidden prompt, or the next line).
    mutating func askPassphrase(for room: String) {
        if let problem = RoomName.problem(with: room) { return reject(.invalid(problem)) }
        passphraseWanted = room
        emit(.askPassphrase(room: room))
    }

    /// What answered ``NodeEffect/askPassphrase(room:)``: the key the shell derived from it
    /// (deriving takes about 0.2 s on purpose, so it happens off the machine), or why none.
    mutating func passphraseEntered(_ result: PassphraseAnswer, now: NodeTime) {
        guard let room = passphraseWanted else { return }
        passphraseWanted = nil
        switch result {
        case .key(let key): join(key: key, now: now)
        case .none: say(.noPassphraseGiven(room: room))
        case .failed(let why): reject(.keyFailed(room: room, why: why))
        }
    }

    // MARK: Cards: what probes and acks carry for privacy

    /// A probe or ack of this node with its card filled in: its X25519 key for direct messages,
    /// and a name check beside each private room (see ``RoomKey/nameTag(for:room:)``).
    func withCard(_ message: WireMessage) -> WireMessage {
        func tags(_ rooms: [String]) -> [[UInt8]] {
            rooms.map { self.rooms[entry: $0].key?.nameTag(for: identity.id, room: $0) ?? WireLimits.noRoomTag }
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
    mutating func read(card agreementKey: [UInt8], roomTags: [[UInt8]], rooms: [String], of peer: NodeID, nick: String, now: NodeTime) {
        if agreementKey != WireLimits.noAgreementKey { learned(agreementKey: agreementKey, of: peer, nick: nick) }
        for (room, tag) in zip(rooms, roomTags) where tag != WireLimits.noRoomTag {
            for key in joined.compactMap({ self.rooms[entry: $0].key }) {
                let mismatch = PassphraseMismatch(peer: peer, room: key.id)
                let recent = self.rooms[entry: key.id].mismatchesTold.filter { now.wall - $0 < Self.passphraseMismatchWindow }
                guard key.isSameNameOtherPassphrase(tag, from: peer, room: room),
                    !passphraseMismatches.contains(mismatch), recent.count < Self.passphraseMismatchesPerWindow
                else { continue }
                self.rooms[entry: key.id].mismatchesTold = recent + [now.wall]
                if passphraseMismatches.count < Self.maximumPassphraseMismatches { passphraseMismatches.insert(mismatch) }
                if membership.alivePeers(inRoom: key.id).isEmpty {
                    reject(.wrongPassphrase(room: key.name, nick: nick))
                } else {
                    say(.otherPassphrase(nick: nick, room: key.name))
                }
            }
        }
    }

    /// How often, at most, a node says that someone holds another passphrase for one room:
    /// three times a minute.
    static let passphraseMismatchWindow = TimeSpan.seconds(60)
    static let passphraseMismatchesPerWindow = 3
    /// Most (peer, room) pairs remembered as told.
    static let maximumPassphraseMismatches = 256
}

/// What answered a passphrase prompt.
public enum PassphraseAnswer: Sendable {
    /// The key derived from it.
    case key(RoomKey)
    /// The prompt was given up, or the passphrase was empty.
    case none
    /// The key could not be derived.
    case failed(String)
}
