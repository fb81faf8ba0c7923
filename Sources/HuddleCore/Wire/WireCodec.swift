/// Constants of the Huddle wire protocol.
public enum WireProtocol {
    /// The protocol version this node speaks, sent in every envelope and in the DNS-SD TXT record.
    public static let version: UInt8 = 6
    /// The two bytes that start every message: ASCII "HD".
    public static let magic: UInt16 = 0x4844
    /// Magic (2 bytes), version (1), kind (1).
    public static let envelopeByteCount = 4

    /// The kind `bytes` say they are in their envelope, if it is a whole envelope of this version:
    /// read before decoding, so a shell or the machine can pick a decoder, or refuse a datagram,
    /// without reading the rest.
    public static func kind(of bytes: some Collection<UInt8>) -> UInt8? {
        var reader = ByteReader(bytes.prefix(envelopeByteCount))
        guard (try? reader.readUInt16()) == magic, (try? reader.readUInt8()) == version else { return nil }
        return try? reader.readUInt8()
    }
}

extension WireMessage {
    /// The message as one datagram or frame payload: envelope + payload.
    ///
    /// Encoding never fails. A message whose fields break ``WireLimits`` (say, a chat text over
    /// 4 096 bytes) encodes to bytes every receiver rejects; ``validate()`` reports that early.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: encodedByteCount)
        encode(into: &writer)
        return writer.bytes
    }

    /// Number of bytes ``encoded()`` returns, computed without encoding: use it to fit peer lists
    /// and event batches into ``WireLimits/maxDatagramBytes`` or ``WireLimits/maxFrameBytes``.
    public var encodedByteCount: Int {
        let payload: Int
        switch self {
        case .events(let events):
            payload = 2 + events.reduce(0) { $0 + $1.encodedByteCount }
        case .digest(let digest):
            payload = NodeID.byteCount + stringBytes(digest.room) + vectorBytes(digest.vector) + 8 * digest.vector.count
        case .syncRequest(let request):
            payload = NodeID.byteCount + stringBytes(request.room) + vectorBytes(request.have) + 2
        case .syncResponse(let response):
            payload = stringBytes(response.room) + 2 + response.events.reduce(0) { $0 + $1.encodedByteCount } + 1
        case .probe(let probe):
            payload =
                NodeID.byteCount + stringBytes(probe.nick) + 8 + 8 + 8 + 2
                + listBytes(rooms: probe.rooms, peers: probe.peers) + cardBytes(rooms: probe.rooms)
                + Event.signatureByteCount
        case .ack(let ack):
            payload =
                NodeID.byteCount + stringBytes(ack.nick) + 8 + 8 + 8
                + listBytes(rooms: ack.rooms, peers: ack.peers) + cardBytes(rooms: ack.rooms)
                + Event.signatureByteCount
        case .probeRequest, .nack:
            payload = NodeID.byteCount * 2 + 8 + Event.signatureByteCount
        case .leaving:
            payload = NodeID.byteCount + 8 + Event.signatureByteCount
        case .pieceRequest:
            payload = Picture.hashByteCount + 4
        case .piece(let piece):
            payload = Picture.hashByteCount + 4 + 4 + piece.bytes.count
        }
        return WireProtocol.envelopeByteCount + payload
    }

    /// Decodes one datagram or frame payload. Rejects anything but exactly one well-formed
    /// message of this protocol version (trailing bytes included); never traps.
    ///
    /// A well-formed envelope of another version throws ``WireError/unsupportedVersion(_:)``, so
    /// callers can tell a newer peer from garbage. Event signatures are not checked here.
    public init(decoding bytes: some Collection<UInt8>) throws(WireError) {
        var reader = ByteReader(bytes)
        self = try WireMessage(from: &reader)
        try reader.expectEnd()
    }

    /// Throws the error a receiver would report for this message, if any (a string or list over
    /// its limit, a control character, seq 0). Messages decoded from the wire are always valid.
    public func validate() throws(WireError) {
        _ = try WireMessage(decoding: encoded())
    }

    func encode(into writer: inout ByteWriter) {
        writer.write(WireProtocol.magic)
        writer.write(WireProtocol.version)
        writer.write(kind.rawValue)
        switch self {
        case .events(let events):
            writer.write(events: events)
        case .digest(let digest):
            writer.write(digest.from)
            writer.write(string: digest.room)
            writer.write(digest.vector)
            for (origin, _) in digest.vector.entries { writer.write(digest.fingerprints[origin] ?? 0) }
        case .syncRequest(let request):
            writer.write(request.from)
            writer.write(string: request.room)
            writer.write(request.have)
            writer.write(request.limit)
        case .syncResponse(let response):
            writer.write(string: response.room)
            writer.write(events: response.events)
            writer.write(response.more)
        case .probe(let probe):
            writer.write(probe.from)
            writer.write(string: probe.nick)
            writer.write(probe.incarnation)
            writer.write(probe.sequence)
            writer.write(probe.sentAt)
            writer.write(probe.port)
            writer.write(rooms: probe.rooms)
            writer.write(peers: probe.peers)
            writer.writeCard(agreementKey: probe.agreementKey, roomTags: probe.roomTags, rooms: probe.rooms)
            writer.write(signature: probe.signature)
        case .ack(let ack):
            writer.write(ack.from)
            writer.write(string: ack.nick)
            writer.write(ack.incarnation)
            writer.write(ack.sequence)
            writer.write(ack.echoedSentAt)
            writer.write(rooms: ack.rooms)
            writer.write(peers: ack.peers)
            writer.writeCard(agreementKey: ack.agreementKey, roomTags: ack.roomTags, rooms: ack.rooms)
            writer.write(signature: ack.signature)
        case .probeRequest(let request):
            writer.write(request.from)
            writer.write(request.target)
            writer.write(request.sentAt)
            writer.write(signature: request.signature)
        case .nack(let nack):
            writer.write(nack.from)
            writer.write(nack.target)
            writer.write(nack.sentAt)
            writer.write(signature: nack.signature)
        case .leaving(let leaving):
            writer.write(leaving.from)
            writer.write(leaving.incarnation)
            writer.write(signature: leaving.signature)
        case .pieceRequest(let request):
            writer.write(request)
        case .piece(let piece):
            writer.write(piece)
        }
    }

    /// Reads an envelope and its payload; leaves the reader after the payload.
    init(from reader: inout ByteReader) throws(WireError) {
        let rawKind = try reader.readEnvelope()
        guard let kind = Kind(rawValue: rawKind) else { throw .unknownMessageKind(rawKind) }
        switch kind {
        case .events:
            self = .events(try reader.readEvents())
        case .digest:
            let from = try reader.readNodeID()
            let room = try reader.readRoom()
            let vector = try reader.readVersionVector()
            var fingerprints: [NodeID: UInt64] = [:]
            for (origin, _) in vector.entries {
                let fingerprint = try reader.readUInt64()
                if fingerprint != 0 { fingerprints[origin] = fingerprint }
            }
            self = .digest(RoomDigest(from: from, room: room, vector: vector, fingerprints: fingerprints))
        case .syncRequest:
            self = .syncRequest(
                SyncRequest(
                    from: try reader.readNodeID(), room: try reader.readRoom(), have: try reader.readVersionVector(),
                    limit: try reader.readUInt16()))
        case .syncResponse:
            self = .syncResponse(
                SyncResponse(room: try reader.readRoom(), events: try reader.readEvents(), more: try reader.readBool())
            )
        case .probe:
            var probe = Probe(
                from: try reader.readNodeID(), nick: try reader.readNick(), incarnation: try reader.readUInt64(),
                sequence: try reader.readUInt64(), sentAt: try reader.readMonotonicTime(), port: try reader.readUInt16(),
                rooms: try reader.readRooms(), peers: try reader.readPeers())
            (probe.agreementKey, probe.roomTags) = try reader.readCard(rooms: probe.rooms.count)
            probe.signature = Array(try reader.readBytes(Event.signatureByteCount))
            self = .probe(probe)
        case .ack:
            var ack = Ack(
                from: try reader.readNodeID(), nick: try reader.readNick(), incarnation: try reader.readUInt64(),
                sequence: try reader.readUInt64(), echoedSentAt: try reader.readMonotonicTime(),
                rooms: try reader.readRooms(), peers: try reader.readPeers())
            (ack.agreementKey, ack.roomTags) = try reader.readCard(rooms: ack.rooms.count)
            ack.signature = Array(try reader.readBytes(Event.signatureByteCount))
            self = .ack(ack)
        case .probeRequest:
            self = .probeRequest(
                ProbeRequest(
                    from: try reader.readNodeID(), target: try reader.readNodeID(), sentAt: try reader.readMonotonicTime(),
                    signature: Array(try reader.readBytes(Event.signatureByteCount))))
        case .nack:
            self = .nack(
                Nack(
                    from: try reader.readNodeID(), target: try reader.readNodeID(), sentAt: try reader.readMonotonicTime(),
                    signature: Array(try reader.readBytes(Event.signatureByteCount))))
        case .leaving:
            self = .leaving(
                Leaving(
                    from: try reader.readNodeID(), incarnation: try reader.readUInt64(),
                    signature: Array(try reader.readBytes(Event.signatureByteCount))))
        case .pieceRequest:
            self = .pieceRequest(try reader.readPieceRequest())
        case .piece:
            self = .piece(try reader.readPiece())
        }
    }
}

private func stringBytes(_ string: String) -> Int { 2 + string.utf8.count }

private func vectorBytes(_ vector: VersionVector) -> Int {
    2 + vector.count * WireLimits.versionVectorEntryBytes
}

/// The agreement key, then one room tag per room.
private func cardBytes(rooms: [String]) -> Int {
    WireLimits.agreementKeyBytes + 2 + rooms.count * WireLimits.roomTagBytes
}

private func listBytes(rooms: [String], peers: [PeerRecord]) -> Int {
    2 + rooms.reduce(0) { $0 + stringBytes($1) } + 2 + peers.reduce(0) { $0 + $1.encodedByteCount }
}

extension ByteWriter {
    mutating func write(events: [Event]) {
        let count = write(count: events.count)
        for event in events.prefix(count) {
            write(event)
        }
    }

    mutating func write(rooms: [String]) {
        let count = write(count: rooms.count)
        for room in rooms.prefix(count) {
            write(string: room)
        }
    }

    /// `agreementKey:32  count:u16 (tag:16)*`, with exactly one tag per room written (a missing
    /// one as zeros), and a key or tag of another length cut or zero-padded.
    mutating func writeCard(agreementKey: [UInt8], roomTags: [[UInt8]], rooms: [String]) {
        writeFixed(agreementKey, count: WireLimits.agreementKeyBytes)
        let count = write(count: rooms.count)
        for index in 0..<count {
            writeFixed(index < roomTags.count ? roomTags[index] : [], count: WireLimits.roomTagBytes)
        }
    }

    private mutating func writeFixed(_ bytes: [UInt8], count: Int) {
        write(bytes: bytes.prefix(count))
        for _ in min(bytes.count, count)..<count { write(UInt8(0)) }
    }

    mutating func write(peers: [PeerRecord]) {
        let count = write(count: peers.count)
        for peer in peers.prefix(count) {
            write(peer.id)
            write(string: peer.nick)
            write(string: peer.host)
            write(peer.port)
            write(peer.state.rawValue)
            write(peer.incarnation)
        }
    }
}

extension ByteReader {
    /// Reads an envelope's magic and version, checking both, and returns its message kind.
    mutating func readEnvelope() throws(WireError) -> UInt8 {
        let magic = try readUInt16()
        guard magic == WireProtocol.magic else { throw .badMagic(magic) }
        let version = try readUInt8()
        guard version == WireProtocol.version else { throw .unsupportedVersion(version) }
        return try readUInt8()
    }

    mutating func readRoom() throws(WireError) -> String {
        try readString(.room, maxBytes: WireLimits.maxRoomBytes)
    }

    mutating func readNick() throws(WireError) -> String {
        try readString(.nick, maxBytes: WireLimits.maxNickBytes)
    }

    mutating func readEvents() throws(WireError) -> [Event] {
        let count = try readCount(
            .events, max: WireLimits.maxEventsPerBatch, minElementBytes: WireLimits.minEventBytes)
        var events = [Event]()
        events.reserveCapacity(count)
        for _ in 0..<count {
            events.append(try readEvent())
        }
        return events
    }

    mutating func readRooms() throws(WireError) -> [String] {
        let count = try readCount(.rooms, max: WireLimits.maxRoomsPerNode, minElementBytes: 2)
        var rooms = [String]()
        rooms.reserveCapacity(count)
        for _ in 0..<count {
            rooms.append(try readRoom())
        }
        return rooms
    }

    /// The agreement key and the room tags after a probe's or ack's rooms and peers: exactly one
    /// tag per room.
    mutating func readCard(rooms: Int) throws(WireError) -> (agreementKey: [UInt8], roomTags: [[UInt8]]) {
        let agreementKey = Array(try readBytes(WireLimits.agreementKeyBytes))
        let at = offset
        let count = Int(try readUInt16())
        guard count == rooms else {
            throw .lengthOutOfRange(.roomTags, length: count, min: rooms, max: rooms, offset: at)
        }
        var tags: [[UInt8]] = []
        tags.reserveCapacity(count)
        for _ in 0..<count { tags.append(Array(try readBytes(WireLimits.roomTagBytes))) }
        // No tags at all reads as none, as a probe that never had any is written.
        return (agreementKey, tags.allSatisfy { $0 == WireLimits.noRoomTag } ? [] : tags)
    }

    mutating func readPeers() throws(WireError) -> [PeerRecord] {
        let count = try readCount(
            .peers, max: WireLimits.maxPeersPerList, minElementBytes: WireLimits.minPeerRecordBytes)
        var peers = [PeerRecord]()
        peers.reserveCapacity(count)
        for _ in 0..<count {
            let id = try readNodeID()
            let nick = try readNick()
            let host = try readString(.host, maxBytes: WireLimits.maxHostBytes)
            let port = try readUInt16()
            let stateOffset = offset
            let rawState = try readUInt8()
            guard let state = PeerState(rawValue: rawState) else {
                throw .unknownPeerState(rawState, offset: stateOffset)
            }
            peers.append(
                PeerRecord(id: id, nick: nick, host: host, port: port, state: state, incarnation: try readUInt64()))
        }
        return peers
    }
}
