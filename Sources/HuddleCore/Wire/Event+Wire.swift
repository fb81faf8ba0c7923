/// The wire form of an event, and the bytes its signature covers.
///
///     event = origin:32 seq:u64 previous:32 room:str createdAt:i64 context:vv body signature:64
///
///     signedBytes = "huddle-event-v2" 0x00  origin:32 seq:u64 previous:32 room:str createdAt:i64 context:vv body
///                 = "huddle-event-v1" 0x00  origin:32 seq:u64 room:str createdAt:i64 context:vv body
///                   when `previous` is all zeros (no link: the form every event had before links)
///
/// The body of a private room's event is its sealed form (``EventBody/sealed(bytes:)``), on the
/// wire, in the store and under the signature alike: only ``Event/body`` of an opened event is
/// the plain one.
///
/// The encoding is canonical (one byte string per event, and decoding then encoding gives the
/// same bytes), so a receiver verifies the signature over ``signedBytes`` recomputed from the
/// decoded event. See docs/PROTOCOL.md for the field layouts.
extension Event {
    /// The domain-separation tag that starts ``signedBytes`` of an event with no link: ASCII
    /// "huddle-event-v1" and a zero byte, so an event signature can never be mistaken for a
    /// signature over anything else.
    public static let signingDomain: [UInt8] = Array("huddle-event-v1".utf8) + [0]
    /// The tag that starts ``signedBytes`` of an event that names its ``previous``.
    public static let linkedSigningDomain: [UInt8] = Array("huddle-event-v2".utf8) + [0]

    /// The bytes the origin signs for an event with these fields: ``signingDomain`` followed by
    /// the canonical encoding of every field except the signature (and except `previous` when it
    /// is ``EventDigest/none``, under ``signingDomain``; under ``linkedSigningDomain`` otherwise).
    /// `createdAt` goes as whole ms, rounded down.
    public static func signedBytes(
        id: EventID, room: String, createdAt: WallTime, context: VersionVector, previous: EventDigest = .none,
        body: EventBody
    ) -> [UInt8] {
        signedBytes(
            id: id, room: room, createdAtMilliseconds: createdAt.millisecondsSinceEpoch, context: context,
            previous: previous, body: body)
    }

    static func signedBytes(
        id: EventID, room: String, createdAtMilliseconds: Int64, context: VersionVector, previous: EventDigest = .none,
        body: EventBody
    ) -> [UInt8] {
        let linked = !previous.isNone
        var writer = ByteWriter(
            capacity: signingDomain.count
                + fieldsByteCount(room: room, context: context, body: body)
                - (linked ? 0 : EventDigest.byteCount))
        writer.write(bytes: linked ? linkedSigningDomain : signingDomain)
        writer.writeEventFields(
            id: id, room: room, createdAtMilliseconds: createdAtMilliseconds, context: context,
            previous: linked ? previous : nil, body: body)
        return writer.bytes
    }

    /// The bytes ``signature`` must be a signature over, by ``origin``.
    public var signedBytes: [UInt8] {
        Self.signedBytes(
            id: id, room: room, createdAtMilliseconds: createdAtMilliseconds, context: context, previous: previous,
            body: wireBody)
    }

    /// The event's wire encoding (no envelope): every field, then the 64-byte signature. Also the
    /// form to store it in.
    ///
    /// A signature that is not 64 bytes long is cut or zero-padded to 64 (it cannot verify
    /// anyway); other out-of-limit fields encode to bytes that ``init(decoding:)`` rejects.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: encodedByteCount)
        writer.write(self)
        return writer.bytes
    }

    /// Decodes one event from exactly the bytes of ``encoded()``; trailing bytes are an error.
    /// This checks the format only: verify ``signature`` before trusting the event.
    public init(decoding bytes: some Collection<UInt8>) throws(WireError) {
        var reader = ByteReader(bytes)
        self = try reader.readEvent()
        try reader.expectEnd()
    }

    /// Number of bytes ``encoded()`` returns, computed without encoding.
    public var encodedByteCount: Int {
        Self.fieldsByteCount(room: room, context: context, body: wireBody) + Event.signatureByteCount
    }

    /// Throws the error a receiver would report for this event, if any: a string over its limit or
    /// with a control character, a context over ``WireLimits/maxVersionVectorEntries``, seq 0;
    /// for a sealed event, the same of the body inside. Call before signing user input.
    public func validate() throws(WireError) {
        guard seq > 0 else { throw .zeroSequence(.eventSeq, offset: NodeID.byteCount) }
        _ = try Event(decoding: encoded())
        if seal != nil { try body.validate() }
    }

    static func fieldsByteCount(room: String, context: VersionVector, body: EventBody) -> Int {
        NodeID.byteCount + 8 + EventDigest.byteCount + 2 + room.utf8.count + 8
            + 2 + context.count * WireLimits.versionVectorEntryBytes + body.encodedByteCount
    }
}

extension EventBody {
    /// The tag byte that starts an encoded body.
    enum Tag: UInt8 {
        case join = 1
        case leave = 2
        case chat = 3
        case calibrationEvent = 4
        case mark = 5
        case delayNudge = 6
        case sealed = 7
        case score = 8
        case teams = 9
        case unmark = 10
        case heard = 11
        case picture = 12
        case voided = 13
    }

    var tag: Tag {
        switch self {
        case .join: .join
        case .leave: .leave
        case .chat: .chat
        case .calibrationEvent: .calibrationEvent
        case .mark: .mark
        case .delayNudge: .delayNudge
        case .sealed: .sealed
        case .score: .score
        case .teams: .teams
        case .unmark: .unmark
        case .heard: .heard
        case .picture: .picture
        case .voided: .voided
        }
    }

    /// Number of bytes the body takes on the wire, tag included.
    var encodedByteCount: Int {
        switch self {
        case .join(let nick): 1 + 2 + nick.utf8.count
        case .leave: 1
        case .chat(let text): 1 + 2 + text.utf8.count
        case .calibrationEvent(let label), .mark(let label), .unmark(let label): 1 + 2 + label.utf8.count
        case .delayNudge: 1 + 8
        case .sealed(let bytes): 1 + 2 + bytes.count
        case .score: 1 + 2 + 2
        case .teams(let home, let guest): 1 + 2 + home.utf8.count + 2 + guest.utf8.count
        case .heard: 1 + WireLimits.heardBodyBytes
        case .picture(let picture): 1 + picture.encodedByteCount
        case .voided: 1 + 8
        }
    }

    /// Throws the error a receiver would report for this body inside a sealed event.
    func validate() throws(WireError) {
        var writer = ByteWriter(capacity: encodedByteCount)
        writer.write(self)
        var reader = ByteReader(writer.bytes)
        guard try !reader.readEventBody().isSealed else { throw .sealedInsideSealed }
        try reader.expectEnd()
    }
}

extension ByteWriter {
    mutating func write(_ id: NodeID) {
        write(id.raw)
    }

    /// `count:u16` then `(origin:32 seq:u64)*`, ascending by origin (zero entries are never stored).
    mutating func write(_ vector: VersionVector) {
        let entries = vector.entries
        let count = write(count: entries.count)
        for entry in entries.prefix(count) {
            write(entry.origin)
            write(entry.seq)
        }
    }

    mutating func write(_ body: EventBody) {
        write(body.tag.rawValue)
        switch body {
        case .join(let nick): write(string: nick)
        case .leave: break
        case .chat(let text): write(string: text)
        case .calibrationEvent(let label), .mark(let label), .unmark(let label): write(string: label)
        case .delayNudge(let milliseconds): write(milliseconds)
        case .sealed(let bytes):
            write(UInt16(truncatingIfNeeded: bytes.count))
            write(bytes: bytes)
        case .score(let home, let guest):
            write(home)
            write(guest)
        case .teams(let home, let guest):
            write(string: home)
            write(string: guest)
        case .heard(let match):
            write(match.peer)
            write(match.atMilliseconds)
            write(match.lag.microseconds)
            write(match.sigmaMicros)
            write(match.confidenceTenths)
        case .picture(let picture):
            write(picture)
        case .voided(let from):
            write(from)
        }
    }

    /// Every field of an event but its signature: the part ``Event/signedBytes`` covers.
    /// `previous` `nil` leaves the link out (the signed form of an event with none).
    mutating func writeEventFields(
        id: EventID, room: String, createdAtMilliseconds: Int64, context: VersionVector, previous: EventDigest?,
        body: EventBody
    ) {
        write(id.origin)
        write(id.seq)
        if let previous { write(previous.raw) }
        write(string: room)
        write(createdAtMilliseconds)
        write(context)
        write(body)
    }

    mutating func write(_ event: Event) {
        writeEventFields(
            id: event.id, room: event.room, createdAtMilliseconds: event.createdAtMilliseconds, context: event.context,
            previous: event.previous, body: event.wireBody)
        write(signature: event.signature)
    }

    /// A 64-byte signature: one of another length is cut or zero-padded (it cannot verify).
    mutating func write(signature: [UInt8]) {
        let signature = signature.prefix(Event.signatureByteCount)
        write(bytes: signature)
        for _ in signature.count..<Event.signatureByteCount {
            write(UInt8(0))
        }
    }
}

extension ByteReader {
    mutating func readVersionVector() throws(WireError) -> VersionVector {
        let count = try readCount(
            .versionVector, max: WireLimits.maxVersionVectorEntries,
            minElementBytes: WireLimits.versionVectorEntryBytes)
        var entries: [VersionVector.Entry] = []
        entries.reserveCapacity(count)
        var previous: NodeID?
        for _ in 0..<count {
            let originOffset = offset
            let origin = try readNodeID()
            if let previous, !(previous < origin) {
                throw .unsortedVersionVector(offset: originOffset)
            }
            let seqOffset = offset
            let seq = try readUInt64()
            guard seq > 0 else { throw .zeroSequence(.versionVector, offset: seqOffset) }
            entries.append(VersionVector.Entry(origin: origin, seq: seq))
            previous = origin
        }
        return VersionVector(ascending: entries)
    }

    mutating func readEventBody() throws(WireError) -> EventBody {
        let tagOffset = offset
        let rawTag = try readUInt8()
        guard let tag = EventBody.Tag(rawValue: rawTag) else {
            throw .unknownEventBody(tag: rawTag, offset: tagOffset)
        }
        switch tag {
        case .join: return .join(nick: try readString(.nick, maxBytes: WireLimits.maxNickBytes))
        case .leave: return .leave
        case .chat: return .chat(text: try readString(.chatText, maxBytes: WireLimits.maxChatTextBytes))
        case .calibrationEvent:
            return .calibrationEvent(label: try readString(.label, maxBytes: WireLimits.maxLabelBytes))
        case .mark: return .mark(label: try readString(.label, maxBytes: WireLimits.maxLabelBytes))
        case .unmark: return .unmark(label: try readString(.label, maxBytes: WireLimits.maxLabelBytes))
        case .delayNudge: return .delayNudge(milliseconds: try readInt64())
        case .sealed:
            let at = offset
            let length = Int(try readUInt16())
            guard (WireLimits.minSealedBytes...WireLimits.maxSealedBytes).contains(length) else {
                throw .lengthOutOfRange(
                    .sealedBody, length: length, min: WireLimits.minSealedBytes, max: WireLimits.maxSealedBytes,
                    offset: at)
            }
            return .sealed(bytes: Array(try readBytes(length)))
        case .score: return .score(home: try readUInt16(), guest: try readUInt16())
        case .teams:
            return .teams(
                home: try readString(.label, maxBytes: WireLimits.maxLabelBytes),
                guest: try readString(.label, maxBytes: WireLimits.maxLabelBytes))
        case .heard:
            return .heard(
                HeardMatch(
                    peer: try readNodeID(), atMilliseconds: try readInt64(), lag: .microseconds(try readInt64()),
                    sigmaMicros: try readUInt32(), confidenceTenths: try readUInt16()))
        case .picture:
            return .picture(try readPicture())
        case .voided:
            return .voided(from: try readUInt64())
        }
    }

    mutating func readEvent() throws(WireError) -> Event {
        let origin = try readNodeID()
        // seq 0 decodes: the room log refuses that one event (`invalid`), not its whole datagram.
        let seq = try readUInt64()
        let previous = EventDigest(bytes: try readBytes(EventDigest.byteCount))!
        let room = try readString(.room, maxBytes: WireLimits.maxRoomBytes)
        let createdAtMilliseconds = try readInt64()
        let context = try readVersionVector()
        let body = try readEventBody()
        let signature = Array(try readBytes(Event.signatureByteCount))
        return Event(
            id: EventID(origin: origin, seq: seq), room: room, createdAtMilliseconds: createdAtMilliseconds,
            context: context, previous: previous, body: body, signature: signature)
    }
}
