@testable import HuddleCore

/// Messages and events for the wire codec tests: every kind, edge sizes, and random ones.
enum WireSamples {
    static let alice = NodeID.fixture(1)
    static let bob = NodeID.fixture(2)
    static let carol = NodeID.fixture(3)
    /// An id with every byte set, the largest id.
    static let maxID = NodeID(bytes: [UInt8](repeating: 0xFF, count: NodeID.byteCount))!

    /// A string of exactly `bytes` UTF-8 bytes mixing 1-, 2-, 3- and 4-byte scalars.
    static func text(bytes: Int) -> String {
        let pieces = ["🏈", "€", "é", "a"]  // 4, 3, 2, 1 bytes
        var result = ""
        var left = bytes
        var turn = 0
        while left > 0 {
            let piece = pieces[turn % pieces.count]
            turn += 1
            if piece.utf8.count <= left {
                result += piece
                left -= piece.utf8.count
            }
        }
        return result
    }

    /// One body of every kind, plus edge values.
    static let bodies: [EventBody] = [
        .join(nick: "alice"),
        .join(nick: ""),
        .join(nick: text(bytes: WireLimits.maxNickBytes)),
        .leave,
        .chat(text: "touchdown!"),
        .chat(text: ""),
        .chat(text: "Tor! ⚽️ Ça va? 日本語 👨‍👩‍👧‍👦 \u{202E}rtl"),
        .chat(text: text(bytes: WireLimits.maxChatTextBytes)),
        .calibrationEvent(label: "kickoff"),
        .calibrationEvent(label: text(bytes: WireLimits.maxLabelBytes)),
        .mark(label: "kickoff"),
        .mark(label: "clock 10:00 — 2nd half"),
        .delayNudge(milliseconds: 1000),
        .delayNudge(milliseconds: -1000),
        .delayNudge(milliseconds: .min),
        .delayNudge(milliseconds: .max),
        .score(home: 14, guest: 7),
        .score(home: .max, guest: 0),
        .teams(home: "Chiefs", guest: "Eagles"),
        .teams(home: "", guest: text(bytes: WireLimits.maxLabelBytes)),
        .heard(
            HeardMatch(
                peer: bob, at: .milliseconds(sinceEpoch: 1_700_000_000_000), lag: .microseconds(3_198_400),
                confidence: 106.3)),
        .heard(HeardMatch(peer: maxID, atMilliseconds: .min, lag: .max, sigmaMicros: .max, confidenceTenths: .max)),
        .heard(
            HeardMatch(
                peer: carol, atMilliseconds: -1, lag: .seconds(-300), sigmaMicros: 0, confidenceTenths: 0)),
        .sealed(bytes: Array(repeating: 1, count: WireLimits.minSealedBytes)),
        .sealed(bytes: (0..<WireLimits.maxSealedBytes).map { UInt8(truncatingIfNeeded: $0) }),
    ]

    static func signature(_ seed: UInt8) -> [UInt8] {
        (0..<UInt8(Event.signatureByteCount)).map { $0 &* 7 &+ seed }
    }

    static func event(
        _ origin: NodeID = alice, _ seq: UInt64 = 1, _ body: EventBody = .chat(text: "hi"),
        room: String = "superbowl", createdAtMilliseconds: Int64 = 1_700_000_000_000, context: VersionVector = [:]
    ) -> Event {
        Event(
            id: EventID(origin: origin, seq: seq), room: room, createdAtMilliseconds: createdAtMilliseconds,
            context: context, body: body,
            signature: signature(UInt8(truncatingIfNeeded: seq)))
    }

    /// A context vector with `count` entries.
    static func vector(entries count: Int) -> VersionVector {
        var vector = VersionVector()
        for index in 0..<count {
            var bytes = [UInt8](repeating: 0, count: NodeID.byteCount)
            bytes[0] = UInt8(index >> 8)
            bytes[1] = UInt8(index & 0xFF)
            bytes[31] = 0xAA
            vector[NodeID(bytes: bytes)!] = UInt64(index) + 1
        }
        return vector
    }

    /// The largest event the limits allow: a private room's largest sealed body.
    static let maxEvent = event(
        maxID, .max, .sealed(bytes: Array(repeating: 0x5A, count: WireLimits.maxSealedBytes)),
        room: text(bytes: WireLimits.maxRoomBytes),
        createdAtMilliseconds: .min, context: vector(entries: WireLimits.maxVersionVectorEntries))

    /// The smallest event.
    static let minEvent = event(alice, 1, .leave, room: "", createdAtMilliseconds: 0, context: [:])

    static let peers: [PeerRecord] = [
        PeerRecord(id: bob, nick: "bob", host: "192.0.2.12", port: 7400, state: .alive, incarnation: 0),
        PeerRecord(id: carol, nick: "carol ☕", host: "fe80::1%eth0", port: 65535, state: .suspect, incarnation: 7),
        PeerRecord(
            id: maxID, nick: text(bytes: WireLimits.maxNickBytes), host: text(bytes: WireLimits.maxHostBytes),
            port: 0, state: .gone, incarnation: .max),
    ]

    /// Every message kind, with empty and full lists and edge values.
    static let messages: [WireMessage] = [
        .events([]),
        .events([event()]),
        .events(bodies.enumerated().map { event(alice, UInt64($0.offset + 1), $0.element) }),
        .events([minEvent, maxEvent]),
        .digest(RoomDigest(from: alice, room: "superbowl", vector: [:])),
        .digest(
            RoomDigest(from: bob, room: text(bytes: WireLimits.maxRoomBytes), vector: [alice: 3, bob: 1, maxID: .max])),
        .syncRequest(SyncRequest(from: carol, room: "superbowl", have: [:], limit: 0)),
        .syncRequest(SyncRequest(from: carol, room: "r", have: vector(entries: 5), limit: .max)),
        .syncResponse(SyncResponse(room: "superbowl", events: [], more: false)),
        .syncResponse(
            SyncResponse(
                room: "superbowl", events: [event(bob, 4, .mark(label: "kickoff"), context: [alice: 3, bob: 3])],
                more: true)),
        .probe(
            Probe(
                from: alice, nick: "alice", incarnation: 0, sequence: 0, sentAt: .start, port: 7400, rooms: [], peers: [])),
        .probe(
            Probe(
                from: alice, nick: text(bytes: WireLimits.maxNickBytes), incarnation: .max, sequence: 42, sentAt: MonotonicTime(microseconds: -5),
                port: 65535, rooms: ["superbowl", "", text(bytes: WireLimits.maxRoomBytes)], peers: peers,
                agreementKey: (0..<32).map { UInt8($0) * 3 + 1 },
                roomTags: [Array(repeating: 0xAB, count: 16), WireLimits.noRoomTag, Array(repeating: 0xFF, count: 16)])),
        .probeRequest(ProbeRequest(from: alice, target: bob, sentAt: .start)),
        .probeRequest(ProbeRequest(from: maxID, target: carol, sentAt: .distantPast, signature: Array(repeating: 0xEE, count: 64))),
        .nack(Nack(from: carol, target: bob, sentAt: .distantFuture)),
        .nack(Nack(from: bob, target: maxID, sentAt: MonotonicTime(microseconds: -1), signature: (0..<64).map { UInt8($0) })),
        .leaving(Leaving(from: alice, incarnation: .max)),
        .ack(Ack(from: bob, nick: "", incarnation: 1, sequence: 1, echoedSentAt: .distantPast, rooms: [], peers: [])),
        .ack(
            Ack(
                from: bob, nick: "bob", incarnation: 3, sequence: 99, echoedSentAt: .distantFuture,
                rooms: (0..<WireLimits.maxRoomsPerNode).map { "room \($0)" }, peers: peers,
                roomTags: (0..<WireLimits.maxRoomsPerNode).map { Array(repeating: UInt8($0), count: 16) })),
    ]

    /// Samples small enough to truncate or mutate byte by byte.
    static var smallMessages: [WireMessage] { messages.filter { $0.encodedByteCount <= 4_000 } }

    // MARK: Random values

    static func randomString(maxBytes: Int, using rng: inout SplitMix64) -> String {
        let target = Int.random(in: 0...min(maxBytes, 40), using: &rng)
        var result = ""
        var bytes = 0
        while true {
            let scalar: Unicode.Scalar
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<6: scalar = Unicode.Scalar(UInt8.random(in: 0x20...0x7E, using: &rng))
            case 6, 7: scalar = Unicode.Scalar(UInt32.random(in: 0xA0...0x7FF, using: &rng))!
            case 8: scalar = Unicode.Scalar(UInt32.random(in: 0x800...0xD7FF, using: &rng))!
            default: scalar = Unicode.Scalar(UInt32.random(in: 0x10000...0x10FFFF, using: &rng))!
            }
            let size = String(scalar).utf8.count
            guard bytes + size <= target else { return result }
            result.unicodeScalars.append(scalar)
            bytes += size
        }
    }

    static func randomID(using rng: inout SplitMix64) -> NodeID {
        // Few distinct ids, so vectors and events share origins.
        NodeID.fixture(UInt8.random(in: 1...6, using: &rng))
    }

    static func randomVector(using rng: inout SplitMix64) -> VersionVector {
        var vector = VersionVector()
        for _ in 0..<Int.random(in: 0...4, using: &rng) {
            vector[randomID(using: &rng)] =
                UInt64.random(in: 1...UInt64.max, using: &rng)
                >> UInt64.random(
                    in: 0...63, using: &rng)
        }
        return vector
    }

    static func randomBody(using rng: inout SplitMix64) -> EventBody {
        switch Int.random(in: 0..<7, using: &rng) {
        case 0: .join(nick: randomString(maxBytes: WireLimits.maxNickBytes, using: &rng))
        case 1: .leave
        case 2: .chat(text: randomString(maxBytes: WireLimits.maxChatTextBytes, using: &rng))
        case 3: .calibrationEvent(label: randomString(maxBytes: WireLimits.maxLabelBytes, using: &rng))
        case 4: .mark(label: randomString(maxBytes: WireLimits.maxLabelBytes, using: &rng))
        case 5:
            .picture(
                Picture(
                    type: MediaType.allCases.randomElement(using: &rng)!, byteCount: Int(UInt32.random(in: 0...UInt32.max, using: &rng)),
                    width: Int(UInt16.random(in: 0...UInt16.max, using: &rng)), height: Int(UInt16.random(in: 0...UInt16.max, using: &rng)),
                    root: randomBytes(Picture.hashByteCount, using: &rng), key: randomBytes(Picture.hashByteCount, using: &rng),
                    caption: randomString(maxBytes: Picture.maxCaptionBytes, using: &rng)))
        default: .delayNudge(milliseconds: Int64(bitPattern: rng.next()))
        }
    }

    static func randomEvent(using rng: inout SplitMix64) -> Event {
        Event(
            id: EventID(origin: randomID(using: &rng), seq: UInt64.random(in: 1...1000, using: &rng)),
            room: randomString(maxBytes: WireLimits.maxRoomBytes, using: &rng),
            createdAtMilliseconds: Int64(bitPattern: rng.next()), context: randomVector(using: &rng),
            body: randomBody(using: &rng),
            signature: (0..<Event.signatureByteCount).map { _ in UInt8.random(in: 0...255, using: &rng) })
    }

    static func randomBytes(_ count: Int, using rng: inout SplitMix64) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    static func randomPeer(using rng: inout SplitMix64) -> PeerRecord {
        PeerRecord(
            id: randomID(using: &rng), nick: randomString(maxBytes: WireLimits.maxNickBytes, using: &rng),
            host: randomString(maxBytes: WireLimits.maxHostBytes, using: &rng),
            port: UInt16.random(in: 0...UInt16.max, using: &rng),
            state: PeerState.allCases.randomElement(using: &rng)!,
            incarnation: rng.next())
    }

    static func randomList<T>(
        _ maxCount: Int, using rng: inout SplitMix64, _ element: (inout SplitMix64) -> T
    ) -> [T] {
        (0..<Int.random(in: 0...maxCount, using: &rng)).map { _ in element(&rng) }
    }

    static func randomMessage(using rng: inout SplitMix64) -> WireMessage {
        // A probe's or ack's card: a key or none, and one random tag per room or none at all.
        let rooms = randomList(4, using: &rng) { randomString(maxBytes: WireLimits.maxRoomBytes, using: &$0) }
        let agreementKey = Bool.random(using: &rng)
            ? (0..<WireLimits.agreementKeyBytes).map { _ in UInt8.random(in: 0...255, using: &rng) } : WireLimits.noAgreementKey
        let tags = Bool.random(using: &rng)
            ? rooms.map { _ in (0..<WireLimits.roomTagBytes).map { _ in UInt8.random(in: 1...255, using: &rng) } } : []
        switch WireMessage.Kind.allCases.randomElement(using: &rng)! {
        case .events:
            return .events(randomList(4, using: &rng) { randomEvent(using: &$0) })
        case .digest:
            return .digest(
                RoomDigest(
                    from: randomID(using: &rng), room: randomString(maxBytes: WireLimits.maxRoomBytes, using: &rng),
                    vector: randomVector(using: &rng)))
        case .syncRequest:
            return .syncRequest(
                SyncRequest(
                    from: randomID(using: &rng), room: randomString(maxBytes: WireLimits.maxRoomBytes, using: &rng),
                    have: randomVector(using: &rng), limit: UInt16.random(in: 0...UInt16.max, using: &rng)))
        case .syncResponse:
            return .syncResponse(
                SyncResponse(
                    room: randomString(maxBytes: WireLimits.maxRoomBytes, using: &rng),
                    events: randomList(4, using: &rng) { randomEvent(using: &$0) }, more: Bool.random(using: &rng)))
        case .probe:
            return .probe(
                Probe(
                    from: randomID(using: &rng), nick: randomString(maxBytes: WireLimits.maxNickBytes, using: &rng),
                    incarnation: rng.next(), sequence: rng.next(), sentAt: MonotonicTime(microseconds: Int64(bitPattern: rng.next())),
                    port: UInt16.random(in: 0...UInt16.max, using: &rng),
                    rooms: rooms, peers: randomList(4, using: &rng) { randomPeer(using: &$0) },
                    agreementKey: agreementKey, roomTags: tags))
        case .ack:
            return .ack(
                Ack(
                    from: randomID(using: &rng), nick: randomString(maxBytes: WireLimits.maxNickBytes, using: &rng),
                    incarnation: rng.next(), sequence: rng.next(), echoedSentAt: MonotonicTime(microseconds: Int64(bitPattern: rng.next())),
                    rooms: rooms, peers: randomList(4, using: &rng) { randomPeer(using: &$0) },
                    agreementKey: agreementKey, roomTags: tags))
        case .probeRequest:
            return .probeRequest(
                ProbeRequest(from: randomID(using: &rng), target: randomID(using: &rng), sentAt: MonotonicTime(microseconds: Int64(bitPattern: rng.next()))))
        case .nack:
            return .nack(Nack(from: randomID(using: &rng), target: randomID(using: &rng), sentAt: MonotonicTime(microseconds: Int64(bitPattern: rng.next()))))
        case .leaving:
            return .leaving(Leaving(from: randomID(using: &rng), incarnation: rng.next()))
        case .pieceRequest:
            return .pieceRequest(PieceRequest(root: randomBytes(Picture.hashByteCount, using: &rng), index: UInt32.random(in: 0...UInt32.max, using: &rng)))
        case .piece:
            return .piece(
                Piece(
                    root: randomBytes(Picture.hashByteCount, using: &rng), index: UInt32.random(in: 0...UInt32.max, using: &rng),
                    bytes: randomBytes(Int.random(in: 0...64, using: &rng), using: &rng)))
        }
    }
}

/// Decodes `bytes` and returns the error, or `nil` if they decoded.
func wireError(_ bytes: some Collection<UInt8>) -> WireError? {
    do {
        _ = try WireMessage(decoding: bytes)
        return nil
    } catch {
        return error
    }
}
