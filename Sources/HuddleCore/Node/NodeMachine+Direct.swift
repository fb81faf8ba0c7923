/// Direct messages: a private room of two, keyed by X25519 between the two nodes (see
/// ``NodeIdentity/directKey(with:peerAgreementKey:name:)``), named `@nick` for the reader.
///
/// A node knows the direct room of every peer whose signed probe or ack carried an agreement key.
/// It enters that room when it sends the first message there, when a message there arrives (one
/// it can open), or when the other side's digest for it arrives (then it pulls what it missed).
/// The room is not advertised, and not kept as joined across restarts: any of those brings it
/// back, with its history from the store. Messages are held back by the offsets of a room the two
/// share (``sharedCalibrationRoom(with:)``), chosen again whenever rooms or offsets change, so a
/// direct message spoils nothing either.
extension NodeMachine {
    /// A peer's agreement key from its signed probe or ack: the direct room with it is known from
    /// now on. What a peer that changes its key leaves behind is dropped unless this node entered
    /// that room (then its history stays readable), and a weak key is said once per peer, so
    /// flipping keys costs a node nothing that lasts (round 3: ~0.35 kB and an error line a flip).
    mutating func learned(agreementKey: [UInt8], of peer: NodeID, nick: String) {
        // Only peers membership admitted, and a bounded number: fresh keys cost a node nothing.
        guard direct.agreementKeys[peer] != agreementKey, membership.peers[peer] != nil else { return }
        if direct.agreementKeys[peer] == nil, direct.agreementKeys.count >= Self.maximumDirectPeers { forgetDirectKeysOfFormerPeers() }
        guard direct.agreementKeys[peer] != nil || direct.agreementKeys.count < Self.maximumDirectPeers else { return }
        direct.agreementKeys[peer] = agreementKey
        forgetUnenteredDirect(with: peer)
        guard let key = identity.directKey(with: peer, peerAgreementKey: agreementKey, name: "@\(nick)") else {
            countDropped(.weakAgreementKey)
            if direct.weakKeysTold.insert(peer).inserted {
                reject(.weakDirectKey(nick: nick, peer: peer))
            }
            return
        }
        rooms[entry: key.id].key = key
        rooms[entry: key.id].directPeer = peer
        direct.current[peer] = key.id
    }

    /// Drops the direct room with `peer` under the key it offered until now, unless this node is
    /// in it.
    private mutating func forgetUnenteredDirect(with peer: NodeID) {
        guard let room = direct.current.removeValue(forKey: peer), !joined.contains(room) else { return }
        rooms[entry: room].key = nil
        rooms[entry: room].directPeer = nil  // an entry with nothing left is dropped
    }

    /// Makes room among the agreement keys: those of nodes membership no longer knows go, with
    /// their direct rooms this node never entered.
    private mutating func forgetDirectKeysOfFormerPeers() {
        for peer in direct.agreementKeys.keys where membership.peers[peer] == nil {
            direct.agreementKeys[peer] = nil
            direct.weakKeysTold.remove(peer)
            forgetUnenteredDirect(with: peer)
        }
    }

    /// The id of the direct room with `peer` under the agreement key it offers now, when known.
    func directRoom(with peer: NodeID) -> String? {
        direct.current[peer]
    }

    /// `/msg NICK TEXT` and `huddle send --to NICK`: sends a direct message, entering the direct
    /// room first. Returns the event, or why there is none for the caller to say (a message
    /// the room refused, `.notSent`, was already reported by ``originate(_:in:at:now:)``).
    public mutating func sendDirect(to target: String, text: String, now: NodeTime) -> Result<Event, PeerLookupError> {
        let peer: Peer
        switch resolvePeer(target) {
        case .success(let found): peer = found
        case .failure(let problem): return .failure(problem)
        }
        guard let room = directRoom(with: peer.id) else { return .failure(.noKey(peer.nick)) }
        if sharedCalibrationRoom(with: peer.id) == nil, direct.uncalibratedTold.insert(peer.id).inserted {
            say(.directHeldByShield(nick: peer.nick))
        }
        enterDirect(room, now: now)
        // Line breaks travel as U+2028 (``LongLine/lineBreak``): the wire's strings hold no control character.
        return originate(.chat(text: LongLine.flattened(text)), in: room, now: now).map(Result.success) ?? .failure(.notSent)
    }

    /// The live peer `target` names: a nick, or `nick#idprefix` when two share a nick. A bare
    /// nick never reaches a node other than the one first seen under it (see `NodeMachine+People`):
    /// someone else calling itself bob is named `bob#id` or not at all.
    public func resolvePeer(_ target: String) -> Result<Peer, PeerLookupError> {
        let parts = target.split(separator: "#", maxSplits: 1)
        let nick = String(parts.first ?? "")
        let prefix = parts.count == 2 ? parts[1].lowercased() : ""
        let matching = membership.peers.values.filter { peer in
            peer.state != .gone && peer.nick == nick && peer.id.hex.hasPrefix(prefix)
        }.sorted { $0.id < $1.id }
        switch matching.count {
        case 0: return .failure(.unknown(target))
        case 1:
            if prefix.isEmpty, let known = knownNicks[nick], known != matching[0].id {
                return .failure(.notTheOneYouKnow(nick, id: "\(matching[0].id)", known: "\(known)"))
            }
            return .success(matching[0])
        default: return .failure(.ambiguous(nick, ids: matching.map { "\($0.id)" }))
        }
    }

    /// Enters the direct room `room` unless this node is in it: its history comes back from
    /// what the store held, and a first ever entry sends a join so the other side sees this
    /// node's nick.
    mutating func enterDirect(_ room: String, now: NodeTime) {
        guard !joined.contains(room), rooms[entry: room].directPeer != nil else { return }
        loadRoom(room, now: now)
        joined.append(room)
        advertiseRooms()
        if rooms[room]?.memberIDs.contains(identity.id) != true {
            originate(.join(nick: nick), in: room, now: now)
        }
        followSharedCalibration(room, now: now)
        perform(replication.joined(room: room, peers: roomPeers(room)), now: now)
    }

    /// The direct rooms this node is in hold messages back by the offsets of a room shared
    /// with the other side (see ``sharedCalibrationRoom(with:)``); held messages are re-timed.
    mutating func followSharedCalibrations(now: NodeTime) {
        for room in joined where rooms[entry: room].directPeer != nil { followSharedCalibration(room, now: now) }
    }

    mutating func followSharedCalibration(_ room: String, now: NodeTime) {
        let calibration = sharedCalibration(forDirect: room)
        guard rooms[room]?.calibration != calibration else { return }
        let outputs = withRoom(room, now: now) { $0.follow(calibration, now: now.wall) }
        show(outputs, room: room, now: now)
    }

    /// The offsets that hold back the messages of direct room `room` (none: shown at once).
    func sharedCalibration(forDirect room: String) -> Calibration {
        guard let other = rooms[entry: room].directPeer, let shared = sharedCalibrationRoom(with: other) else { return .none }
        return rooms[shared]?.calibration ?? .none
    }

    /// The room whose offsets hold back direct messages between this node and `other`: of the
    /// rooms both are in where the two are calibrated together, the first by room name (a
    /// private room's id). One rule on every node, so both sides of a direct room hold its
    /// messages by the same offsets; it is applied again whenever a room's offsets or members
    /// change, whichever room is current.
    public func sharedCalibrationRoom(with other: NodeID) -> String? {
        joined.filter { rooms[entry: $0].directPeer == nil && rooms[$0]?.calibration.areConnected(identity.id, other) == true }.min()
    }

    /// What a direct room shows: messages (and a fault), not joins or offsets, which belong to
    /// the room the two share. A direct message is news however early it was written: the
    /// other side writes before this node enters the room.
    func directOutputs(_ outputs: [RoomOutput]) -> [RoomOutput] {
        outputs.flatMap { output -> [RoomOutput] in
            switch output {
            case .message, .pictureArrived, .equivocated: [output]
            case .earlier(let items):
                items.compactMap { if case .message(let message) = $0 { .message(message) } else { nil } }
            case .joined, .left, .offsetsChanged, .calibrationEvent, .mark, .unmarked, .markSetAside, .lagStepped,
                .score, .teamsNamed, .unplaced, .momentCue, .shieldGrew:
                []
            }
        }
    }

    /// The nick a direct message in `room` went to.
    func directRecipient(of message: ShownMessage, in room: String) -> String? {
        guard let other = rooms[entry: room].directPeer else { return nil }
        guard message.from.id == identity.id else { return nick }
        return rooms[room]?.memberIDs.contains(other) == true
            ? rooms[room]?.member(other).nick : membership.peers[other]?.nick
    }
}

/// Why `/msg` or `huddle send --to` found nobody to send to.
public enum PeerLookupError: Error, Equatable {
    /// Nobody by that nick or id is here.
    case unknown(String)
    /// Several peers have that nick: their ids.
    case ambiguous(String, ids: [String])
    /// The nick is held by another key (`id`) than the one met first under it (`known`).
    case notTheOneYouKnow(String, id: String, known: String)
    /// The peer has offered no key for direct messages.
    case noKey(String)
    /// The room refused the message (too long, or with control characters).
    case notSent
}

/// What a node keeps for direct messages beside the rooms themselves (each direct room's peer is
/// in its ``RoomEntry``): what it knows and said of each peer's agreement key.
public struct DirectPeers: Sendable {
    /// Each peer's direct room under the agreement key it offers now (``NodeMachine/directRoom(with:)``):
    /// a peer that changed its key has older direct rooms too.
    var current: [NodeID: String] = [:]
    /// Peers' X25519 keys for direct messages, from their signed probes and acks.
    var agreementKeys: [NodeID: [UInt8]] = [:]
    /// Peers already told about for offering a weak agreement key (one line each).
    var weakKeysTold: Set<NodeID> = []
    /// Peers already told they share no calibration with this node (once each).
    var uncalibratedTold: Set<NodeID> = []
}
