import Testing

@testable import HuddleCore

@Suite("Wire codec: round trips, layout, limits and rejections", .offThePool)
struct WireCodecTests {
    typealias S = WireSamples

    // MARK: Round trips

    @Test("decode(encode(m)) == m and re-encoding gives the same bytes", arguments: WireSamples.messages)
    func roundTrip(message: WireMessage) throws {
        let bytes = message.encoded()
        let decoded = try WireMessage(decoding: bytes)
        #expect(decoded == message)
        #expect(decoded.encoded() == bytes)
        #expect(message.encodedByteCount == bytes.count)
        #expect(Array(bytes.prefix(4)) == [0x48, 0x44, WireProtocol.version, message.kind.rawValue])
        try message.validate()
    }

    @Test("every event body kind round-trips, alone and in each batch message", arguments: WireSamples.bodies)
    func eventBodyRoundTrip(body: EventBody) throws {
        let event = S.event(S.bob, 7, body, context: [S.alice: 2, S.carol: 9])
        let bytes = event.encoded()
        #expect(bytes.count == event.encodedByteCount)
        let decoded = try Event(decoding: bytes)
        #expect(decoded == event)
        #expect(decoded.encoded() == bytes)
        #expect(decoded.signature == event.signature)
        for message in [
            WireMessage.events([event]),
            .syncResponse(SyncResponse(room: event.room, events: [event, event], more: false)),
        ] {
            #expect(try WireMessage(decoding: message.encoded()) == message)
        }
    }

    @Test("event body tags are the documented bytes")
    func bodyTags() {
        let tags: [(EventBody, UInt8)] = [
            (.join(nick: "a"), 1), (.leave, 2), (.chat(text: "a"), 3), (.calibrationEvent(label: "a"), 4),
            (.mark(label: "a"), 5), (.delayNudge(milliseconds: 1), 6), (.unmark(label: "a"), 10),
            (.heard(HeardMatch(peer: S.bob, at: .epoch, lag: .zero, confidence: 10)), 11),
            (.picture(Picture(type: .still(.jpeg), byteCount: 1, width: 1, height: 1, root: Array(repeating: 1, count: 32),
                              key: Array(repeating: 2, count: 32), caption: "")), 12),
        ]
        for (body, tag) in tags {
            let bytes = S.event(S.alice, 1, body, room: "", context: [:]).encoded()
            #expect(bytes[32 + 8 + 32 + 2 + 8 + 2] == tag)
        }
    }

    @Test("message kinds are the documented bytes")
    func kinds() {
        #expect(WireMessage.Kind.allCases.map(\.rawValue) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13])
        #expect(WireProtocol.version == 6)
        #expect(RelayMessage.kind == 10, "kind 10 is a relay, decoded by RelayMessage")
        #expect(SoundWindow.kind == 11, "kind 11 is a sound window, decoded by SoundWindow and Datagram")
    }

    // MARK: Exact layout

    @Test("a digest encodes to the bytes drawn in PROTOCOL.md")
    func goldenDigest() throws {
        let message = WireMessage.digest(
            RoomDigest(from: S.alice, room: "ab", vector: [S.alice: 5], fingerprints: [S.alice: 0x0102_0304_0506_0708]))
        let alice: [UInt8] = [0x01] + [UInt8](repeating: 0, count: 31)
        let expected: [UInt8] =
            [0x48, 0x44, WireProtocol.version, 0x02] + alice + [0x00, 0x02, 0x61, 0x62] + [0x00, 0x01] + alice
            + [0, 0, 0, 0, 0, 0, 0, 5] + [1, 2, 3, 4, 5, 6, 7, 8]
        #expect(message.encoded() == expected)
        #expect(message.encoded().count == 90)
        #expect(try WireMessage(decoding: expected) == message)
    }

    @Test("a digest's fingerprints come one per vector entry; a missing one is sent as 0 and read as absent")
    func digestFingerprints() throws {
        let digest = RoomDigest(from: S.alice, room: "", vector: [S.alice: 1, S.bob: 2], fingerprints: [S.bob: 9])
        let bytes = WireMessage.digest(digest).encoded()
        #expect(Array(bytes.suffix(16)) == [0, 0, 0, 0, 0, 0, 0, 0] + [0, 0, 0, 0, 0, 0, 0, 9])
        #expect(try WireMessage(decoding: bytes) == .digest(digest))
        // A fingerprint missing from the end is a truncated digest, not a shorter one.
        #expect(wireError(Array(bytes.dropLast(8))) != nil)
        #expect(wireError(bytes + [0]) != nil)
    }

    @Test("an event encodes field by field, and signedBytes is the tag plus all but the signature")
    func goldenEvent() {
        let event = S.event(S.alice, 1, .mark(label: "ko"), room: "r", createdAtMilliseconds: 258, context: [S.bob: 1])
        let alice: [UInt8] = [0x01] + [UInt8](repeating: 0, count: 31)
        let bob: [UInt8] = [0x02] + [UInt8](repeating: 0, count: 31)
        let head = alice + [0, 0, 0, 0, 0, 0, 0, 1]
        let rest: [UInt8] =
            [0x00, 0x01, 0x72] + [0, 0, 0, 0, 0, 0, 0x01, 0x02]
            + [0x00, 0x01] + bob + [0, 0, 0, 0, 0, 0, 0, 1] + [0x05, 0x00, 0x02, 0x6B, 0x6F]
        // No link: 32 zero bytes on the wire, and signed as before links, without them.
        #expect(event.encoded() == head + [UInt8](repeating: 0, count: 32) + rest + event.signature)
        #expect(event.signedBytes == Array("huddle-event-v1".utf8) + [0x00] + head + rest)
        #expect(Event.signingDomain.count == 16)
        // A link: on the wire and under the signature, after the seq, with the tag of version 2.
        let link = [UInt8](1...32)
        let linked = Event(
            id: event.id, room: event.room, createdAt: event.createdAt, context: event.context,
            previous: EventDigest(bytes: link)!, body: event.body, signature: event.signature)
        #expect(linked.encoded() == head + link + rest + event.signature)
        #expect(linked.signedBytes == Array("huddle-event-v2".utf8) + [0x00] + head + link + rest)
        #expect(Event.linkedSigningDomain.count == 16)
    }

    @Test("signedBytes covers every field but the signature", arguments: WireSamples.bodies)
    func signedBytesCoverage(body: EventBody) {
        let event = S.event(S.bob, 3, body, context: [S.alice: 1])
        let signed = event.signedBytes
        #expect(
            signed
                == Event.signedBytes(
                    id: event.id, room: event.room, createdAt: event.createdAt, context: event.context, body: body))
        #expect(Array(signed.prefix(Event.signingDomain.count)) == Event.signingDomain)
        var unlinked = event.encoded().dropLast(64)
        unlinked.removeSubrange(40..<72)
        #expect(Array(signed.dropFirst(Event.signingDomain.count)) == Array(unlinked))

        func with(
            id: EventID? = nil, room: String? = nil, createdAt: WallTime? = nil, context: VersionVector? = nil,
            previous: EventDigest? = nil, body newBody: EventBody? = nil, signature: [UInt8]? = nil
        ) -> Event {
            Event(
                id: id ?? event.id, room: room ?? event.room, createdAt: createdAt ?? event.createdAt,
                context: context ?? event.context, previous: previous ?? event.previous, body: newBody ?? event.body,
                signature: signature ?? event.signature
            )
        }
        #expect(with(signature: S.signature(99)).signedBytes == signed)
        let changed = [
            with(id: EventID(origin: S.carol, seq: 3)), with(id: EventID(origin: S.bob, seq: 4)),
            with(room: event.room + "x"), with(createdAt: event.createdAt + .milliseconds(1)), with(context: [S.alice: 2]),
            with(context: [:]), with(body: body == .leave ? .chat(text: "") : .leave),
            with(previous: EventDigest(of: [1])), with(previous: EventDigest(of: [2])),
        ]
        for other in changed {
            #expect(other.signedBytes != signed)
        }
    }

    // MARK: Limits

    @Test("the largest event fits one datagram; min and max event sizes are exact")
    func eventSizeLimits() throws {
        #expect(S.maxEvent.encodedByteCount == WireLimits.maxEventBytes)
        #expect(S.maxEvent.encoded().count == WireLimits.maxEventBytes)
        #expect(S.minEvent.encoded().count == WireLimits.minEventBytes)
        let datagram = WireMessage.events([S.maxEvent]).encoded()
        #expect(datagram.count <= WireLimits.maxDatagramBytes)
        #expect(try WireMessage(decoding: datagram) == .events([S.maxEvent]))
        #expect(WireLimits.maxDatagramBytes <= 65_507)
    }

    @Test("a full batch decodes; one event more is rejected by count before reading events")
    func batchLimit() throws {
        let full = WireMessage.events(Array(repeating: S.minEvent, count: WireLimits.maxEventsPerBatch))
        #expect(try WireMessage(decoding: full.encoded()) == full)
        let over = WireMessage.events(Array(repeating: S.minEvent, count: WireLimits.maxEventsPerBatch + 1))
        #expect(wireError(over.encoded()) == .countTooLarge(.events, count: 1025, max: 1024, offset: 4))
    }

    @Test("limits on lists: rooms, peers, vector entries")
    func listLimits() throws {
        func probe(rooms: [String] = [], peers: [PeerRecord] = []) -> WireMessage {
            .probe(
                Probe(
                    from: S.alice, nick: "", incarnation: 0, sequence: 0, sentAt: .start, port: 1, rooms: rooms,
                    peers: peers))
        }
        let roomsOffset = 4 + 32 + 2 + 8 + 8 + 8 + 2
        try probe(rooms: Array(repeating: "r", count: 32)).validate()
        #expect(throws: WireError.countTooLarge(.rooms, count: 33, max: 32, offset: roomsOffset)) {
            try probe(rooms: Array(repeating: "r", count: 33)).validate()
        }
        try probe(peers: Array(repeating: S.peers[0], count: 256)).validate()
        #expect(throws: WireError.countTooLarge(.peers, count: 257, max: 256, offset: roomsOffset + 2)) {
            try probe(peers: Array(repeating: S.peers[0], count: 257)).validate()
        }
        let digest = { (entries: Int) in
            WireMessage.digest(RoomDigest(from: S.alice, room: "", vector: S.vector(entries: entries)))
        }
        try digest(1024).validate()
        #expect(throws: WireError.countTooLarge(.versionVector, count: 1025, max: 1024, offset: 38)) {
            try digest(1025).validate()
        }
    }

    @Test("string limits are exact, in UTF-8 bytes")
    func stringLimits() throws {
        // Offset of the chat text's length in `.events([S.event(...)])` with room "superbowl", empty context.
        let textOffset = 4 + 2 + 32 + 8 + 32 + 2 + 9 + 8 + 2 + 1
        try WireMessage.events([S.event(S.alice, 1, .chat(text: S.text(bytes: 4096)))]).validate()
        #expect(throws: WireError.stringTooLong(.chatText, length: 4097, max: 4096, offset: textOffset)) {
            try WireMessage.events([S.event(S.alice, 1, .chat(text: S.text(bytes: 4097)))]).validate()
        }
        #expect(throws: WireError.stringTooLong(.nick, length: 65, max: 64, offset: textOffset)) {
            try WireMessage.events([S.event(S.alice, 1, .join(nick: S.text(bytes: 65)))]).validate()
        }
        #expect(throws: WireError.stringTooLong(.label, length: 66, max: 64, offset: textOffset)) {
            try WireMessage.events([S.event(S.alice, 1, .mark(label: String(repeating: "é", count: 33)))]).validate()
        }
        #expect(throws: WireError.stringTooLong(.room, length: 65, max: 64, offset: 36)) {
            try WireMessage.digest(RoomDigest(from: S.alice, room: S.text(bytes: 65), vector: [:])).validate()
        }
        var host = S.peers[0]
        host.host = S.text(bytes: 256)
        #expect(throws: WireError.self) {
            try WireMessage.ack(
                Ack(from: S.alice, nick: "", incarnation: 0, sequence: 0, echoedSentAt: .start, rooms: [], peers: [host])
            ).validate()
        }
    }

    @Test("values too large for a 16-bit length encode without trapping and are rejected")
    func hugeValuesDoNotTrap() {
        let huge = WireMessage.events([S.event(S.alice, 1, .chat(text: String(repeating: "x", count: 70_000)))])
        #expect(throws: WireError.stringTooLong(.chatText, length: 65535, max: 4096, offset: 100)) {
            try huge.validate()
        }
        let rooms = WireMessage.ack(
            Ack(
                from: S.alice, nick: "", incarnation: 0, sequence: 0, echoedSentAt: .start,
                rooms: Array(repeating: "", count: 70_000), peers: []))
        #expect(throws: WireError.countTooLarge(.rooms, count: 65535, max: 32, offset: 62)) {
            try rooms.validate()
        }
    }

    @Test("a signature of the wrong length is padded or cut to 64 bytes")
    func signatureLength() throws {
        for length in [0, 10, 64, 100] {
            let event = Event(
                id: EventID(origin: S.alice, seq: 1), room: "r", createdAt: .epoch, context: [:], body: .leave,
                signature: [UInt8](repeating: 0xAB, count: length))
            let decoded = try Event(decoding: event.encoded())
            #expect(decoded.signature.count == 64)
            #expect(decoded.signature.prefix(min(length, 64)).allSatisfy { $0 == 0xAB })
            #expect(decoded.signature.dropFirst(min(length, 64)).allSatisfy { $0 == 0 })
        }
    }

    // MARK: Truncation

    @Test("every proper prefix of every message throws", arguments: WireSamples.messages)
    func truncation(message: WireMessage) {
        let bytes = message.encoded()
        // Every prefix of small messages; for large ones, every 97th prefix and the last 300.
        let lengths =
            bytes.count <= 4_000
            ? Array(0..<bytes.count)
            : Array(stride(from: 0, to: bytes.count, by: 97)) + Array((bytes.count - 300)..<bytes.count)
        var accepted: [Int] = []
        for length in lengths where wireError(bytes[..<length]) == nil {
            accepted.append(length)
        }
        #expect(accepted.isEmpty, "prefixes that decoded: \(accepted.prefix(10))")
    }

    @Test("every proper prefix of an event throws", arguments: WireSamples.bodies)
    func eventTruncation(body: EventBody) {
        let bytes = S.event(S.carol, 2, body, context: [S.alice: 1, S.bob: 2]).encoded()
        for length in stride(from: 0, to: bytes.count, by: bytes.count > 1000 ? 13 : 1) {
            #expect(throws: WireError.self) { try Event(decoding: bytes[..<length]) }
        }
    }

    @Test("an empty or short buffer reports exactly what it needed")
    func truncatedErrors() {
        #expect(wireError([]) == .truncated(needed: 2, offset: 0, remaining: 0))
        #expect(wireError([0x48]) == .truncated(needed: 2, offset: 0, remaining: 1))
        #expect(wireError([0x48, 0x44]) == .truncated(needed: 1, offset: 2, remaining: 0))
        #expect(wireError([0x48, 0x44, WireProtocol.version, 0x02, 0x01]) == .truncated(needed: 32, offset: 4, remaining: 1))
    }

    // MARK: Envelope

    @Test("wrong magic is rejected as not ours")
    func badMagic() {
        var bytes = WireSamples.messages[4].encoded()
        bytes[1] = 0x45
        #expect(wireError(bytes) == .badMagic(0x4845))
        #expect(wireError([0x00, 0x00, 0x01, 0x01]) == .badMagic(0))
        #expect(wireError(Array("GET / HTTP/1.1\r\n".utf8)) == .badMagic(0x4745))
    }

    @Test("other protocol versions get their own error", arguments: [UInt8(0), 1, 2, 3, 4, 5, 7, 255])
    func unsupportedVersion(version: UInt8) {
        var bytes = WireSamples.messages[4].encoded()
        bytes[2] = version
        let error = wireError(bytes)
        #expect(error == .unsupportedVersion(version))
        #expect(error?.isUnsupportedVersion == true)
        // A newer version is recognised from the envelope alone, whatever its payload.
        #expect(wireError([0x48, 0x44, version]) == .unsupportedVersion(version))
    }

    @Test("unknown message kinds are rejected", arguments: [UInt8(0), 10, 11, 128, 255])  // 10: not a WireMessage
    func unknownKind(kind: UInt8) {
        #expect(wireError([0x48, 0x44, WireProtocol.version, kind]) == .unknownMessageKind(kind))
        #expect(wireError([0x48, 0x44, WireProtocol.version, kind, 0, 0, 0]) == .unknownMessageKind(kind))
        #expect(wireError([0x48, 0x44, WireProtocol.version, kind])?.isUnsupportedVersion == false)
    }

    @Test("trailing bytes after a message or an event are rejected", arguments: WireSamples.smallMessages)
    func trailingBytes(message: WireMessage) {
        let bytes = message.encoded()
        #expect(wireError(bytes + [0]) == .trailingBytes(count: 1, offset: bytes.count))
        #expect(wireError(bytes + bytes) == .trailingBytes(count: bytes.count, offset: bytes.count))
        let event = S.event().encoded()
        #expect(throws: WireError.trailingBytes(count: 2, offset: event.count)) {
            try Event(decoding: event + [1, 2])
        }
    }

    // MARK: Hostile counts and lengths

    @Test("a huge count with few bytes left is rejected before allocating")
    func hostileCounts() {
        let envelope: [UInt8] = [0x48, 0x44, WireProtocol.version]
        let ten = [UInt8](repeating: 0, count: 10)
        #expect(
            wireError(envelope + [1, 0xFF, 0xFF] + ten) == .countTooLarge(.events, count: 65535, max: 1024, offset: 4))
        #expect(
            wireError(envelope + [1, 0x03, 0xE8] + ten)
                == .countExceedsData(.events, count: 1000, minimumBytes: 149_000, remaining: 10, offset: 4))
        #expect(
            wireError(envelope + [4, 0, 0, 0x00, 0x02] + ten)
                == .countExceedsData(.events, count: 2, minimumBytes: 298, remaining: 10, offset: 6))
        let alice = S.alice.bytes
        #expect(
            wireError(envelope + [2] + alice + [0, 0, 0xFF, 0xFF] + ten)
                == .countTooLarge(.versionVector, count: 65535, max: 1024, offset: 38))
        #expect(
            wireError(envelope + [2] + alice + [0, 0, 0x00, 0x02] + ten)
                == .countExceedsData(.versionVector, count: 2, minimumBytes: 80, remaining: 10, offset: 38))
        let probeHead = envelope + [5] + alice + [0, 0] + [UInt8](repeating: 0, count: 26)
        #expect(
            wireError(probeHead + [0xFF, 0xFF] + ten) == .countTooLarge(.rooms, count: 65535, max: 32, offset: 64))
        #expect(
            wireError(probeHead + [0x00, 0x06] + ten)
                == .countExceedsData(.rooms, count: 6, minimumBytes: 12, remaining: 10, offset: 64))
        #expect(
            wireError(probeHead + [0, 0, 0xFF, 0xFF] + ten)
                == .countTooLarge(.peers, count: 65535, max: 256, offset: 66))
        #expect(
            wireError(probeHead + [0, 0, 0x00, 0x01] + ten)
                == .countExceedsData(.peers, count: 1, minimumBytes: 47, remaining: 10, offset: 66))
    }

    @Test("a huge string length is rejected before reading")
    func hostileLengths() {
        let probe = [0x48, 0x44, WireProtocol.version, 0x05] + S.alice.bytes
        #expect(
            wireError(probe + [0xFF, 0xFF] + [1, 2, 3]) == .stringTooLong(.nick, length: 65535, max: 64, offset: 36))
        #expect(
            wireError(probe + [0x00, 0x41] + [1, 2, 3]) == .stringTooLong(.nick, length: 65, max: 64, offset: 36))
        #expect(wireError(probe + [0x00, 0x40] + [1, 2, 3]) == .truncated(needed: 64, offset: 38, remaining: 3))
    }

    // MARK: Text

    /// A digest whose room is `bytes` (not necessarily valid), and an empty vector.
    static func digest(room bytes: [UInt8]) -> [UInt8] {
        [0x48, 0x44, WireProtocol.version, 0x02] + S.alice.bytes + [0, UInt8(bytes.count)] + bytes + [0, 0]
    }

    @Test(
        "malformed UTF-8 is rejected at the offending byte",
        arguments: [
            ([0x80], 0), ([0xBF], 0), ([0xC0, 0x80], 0), ([0xC1, 0xBF], 0), ([0xE0, 0x80, 0x80], 0),
            ([0xE0, 0x9F, 0xBF], 0), ([0xED, 0xA0, 0x80], 0), ([0xED, 0xBF, 0xBF], 0), ([0xF0, 0x8F, 0xBF, 0xBF], 0),
            ([0xF4, 0x90, 0x80, 0x80], 0), ([0xF5, 0x80, 0x80, 0x80], 0), ([0xFF], 0), ([0xFE], 0),
            ([0x61, 0xC3], 1), ([0x61, 0xE2, 0x82], 1), ([0xE2, 0x82, 0x61], 0), ([0x61, 0x62, 0xF0, 0x9F, 0x8F], 2),
            ([0xC3, 0xA9, 0xC3, 0x28], 2),
        ] as [([UInt8], Int)])
    func invalidUTF8(bytes: [UInt8], position: Int) {
        #expect(wireError(Self.digest(room: bytes)) == .invalidUTF8(.room, offset: 38 + position))
    }

    @Test("C0 controls and DEL are rejected", arguments: [UInt8(0x00), 0x01, 0x09, 0x0A, 0x0D, 0x1B, 0x1F, 0x7F])
    func controlCharacters(byte: UInt8) {
        #expect(wireError(Self.digest(room: [byte])) == .controlCharacter(.room, byte: byte, offset: 38))
        #expect(
            wireError(Self.digest(room: [0x61, 0x62, byte, 0x63])) == .controlCharacter(.room, byte: byte, offset: 40))
        let chat = WireMessage.events([S.event(S.alice, 1, .chat(text: "a" + String(UnicodeScalar(byte)) + "b"))])
        #expect(throws: WireError.controlCharacter(.chatText, byte: byte, offset: 103)) { try chat.validate() }
    }

    @Test(
        "well-formed text round-trips byte for byte",
        arguments: [
            [0x20], [0x7E], [0xC2, 0x80], [0xC2, 0x9F], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF],
            [0xEE, 0x80, 0x80], [0xEF, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF],
            Array("e\u{301}".utf8), Array("\u{E9}".utf8), Array("👨‍👩‍👧".utf8),
        ] as [[UInt8]])
    func validText(bytes: [UInt8]) throws {
        let encoded = Self.digest(room: bytes)
        let message = try WireMessage(decoding: encoded)
        guard case .digest(let digest) = message else {
            Issue.record("decoded \(message)")
            return
        }
        #expect(Array(digest.room.utf8) == bytes)
        #expect(message.encoded() == encoded)
    }

    @Test("the UTF-8 check agrees with the standard library on every 1- and 2-byte string and random longer ones")
    func textCheckMatchesStdlib() {
        func stdlibAccepts(_ bytes: [UInt8]) -> Bool {
            guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return false }
            if #available(macOS 15, *) {
                return String(validating: bytes, as: UTF8.self) != nil
            } else {
                return String(decoding: bytes, as: UTF8.self).utf8.elementsEqual(bytes)
            }
        }
        var mismatches: [[UInt8]] = []
        func compare(_ bytes: [UInt8]) {
            if (WireText.check(bytes[...]) == .valid) != stdlibAccepts(bytes), mismatches.count < 10 {
                mismatches.append(bytes)
            }
        }
        for a in 0...255 {
            compare([UInt8(a)])
            for b in 0...255 { compare([UInt8(a), UInt8(b)]) }
        }
        let interesting: [UInt8] = [
            0x00, 0x1F, 0x20, 0x41, 0x7E, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0,
            0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF,
        ]
        var rng = SplitMix64(seed: 0x7E57)
        for _ in 0..<200_000 {
            let count = Int.random(in: 3...7, using: &rng)
            compare((0..<count).map { _ in interesting.randomElement(using: &rng)! })
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
    }

    // MARK: Canonical form

    /// `.digest` from alice in room "" with vector [alice: 1, bob: 2]: entries at 40 and 80.
    static let twoEntryDigest = WireMessage.digest(RoomDigest(from: S.alice, room: "", vector: [S.alice: 1, S.bob: 2]))

    @Test("unsorted, duplicate and zero version-vector entries are rejected")
    func nonCanonicalVectors() {
        let bytes = Self.twoEntryDigest.encoded()
        #expect(bytes.count == 136)  // 120, then a fingerprint per entry
        #expect(wireError(bytes) == nil)

        var swapped = bytes
        swapped.replaceSubrange(40..<120, with: bytes[80..<120] + bytes[40..<80])
        #expect(wireError(swapped) == .unsortedVersionVector(offset: 80))

        var duplicate = bytes
        duplicate.replaceSubrange(80..<120, with: bytes[40..<80])
        #expect(wireError(duplicate) == .unsortedVersionVector(offset: 80))

        var sameOrigin = bytes
        sameOrigin.replaceSubrange(80..<112, with: bytes[40..<72])
        #expect(wireError(sameOrigin) == .unsortedVersionVector(offset: 80))

        var zero = bytes
        zero.replaceSubrange(112..<120, with: [UInt8](repeating: 0, count: 8))
        #expect(wireError(zero) == .zeroSequence(.versionVector, offset: 112))
    }

    @Test("an event with seq 0 decodes beside its neighbours (the log refuses it alone); validate() refuses it")
    func zeroEventSeq() throws {
        var bytes = WireMessage.events([S.event(), S.event(S.bob, 1)]).encoded()
        bytes.replaceSubrange(38..<46, with: [UInt8](repeating: 0, count: 8))
        guard case .events(let events) = try WireMessage(decoding: bytes) else {
            Issue.record("not an events message")
            return
        }
        #expect(events.map(\.seq) == [0, 1])
        #expect(RoomLog(room: events[0].room).rejection(of: events[0]) == .zeroSequence)
        #expect(throws: WireError.zeroSequence(.eventSeq, offset: 32)) {
            try S.event(S.alice, 0).validate()
        }
    }

    @Test("booleans are only 0 or 1", arguments: [UInt8(2), 0x80, 0xFF])
    func booleans(value: UInt8) {
        var bytes = WireMessage.syncResponse(SyncResponse(room: "", events: [], more: false)).encoded()
        #expect(bytes.count == 9)
        bytes[8] = value
        #expect(wireError(bytes) == .invalidBoolean(value, offset: 8))
    }

    @Test("unknown peer states are rejected", arguments: [UInt8(0), 4, 255])
    func peerStates(value: UInt8) {
        let message = WireSamples.messages.last!
        guard case .ack(let ack) = message else { Issue.record("the last sample is no longer an ack"); return }
        var bytes = message.encoded()
        // The last record's state, then its incarnation, the card and the signature.
        let card = WireLimits.agreementKeyBytes + 2 + ack.rooms.count * WireLimits.roomTagBytes
        let offset = bytes.count - 9 - card - Event.signatureByteCount
        #expect(bytes[offset] == PeerState.gone.rawValue)
        bytes[offset] = value
        #expect(wireError(bytes) == .unknownPeerState(value, offset: offset))
    }

    @Test("unknown event body tags are rejected", arguments: [UInt8(0), 14, 255])
    func bodyTag(value: UInt8) {
        var bytes = WireMessage.events([S.event(S.alice, 1, .leave)]).encoded()
        #expect(bytes[99] == 2)
        bytes[99] = value
        #expect(wireError(bytes) == .unknownEventBody(tag: value, offset: 99))
    }

    // MARK: Errors

    @Test("errors describe themselves")
    func descriptions() {
        let cases: [(WireError, String)] = [
            (.truncated(needed: 8, offset: 41, remaining: 3), "truncated: needed 8 bytes at offset 41, 3 left"),
            (.truncated(needed: 1, offset: 2, remaining: 0), "truncated: needed 1 byte at offset 2, 0 left"),
            (.badMagic(0x4745), "bad magic 0x4745 (expected 0x4844 \"HD\"): not a Huddle message"),
            (.unsupportedVersion(7), "unsupported protocol version 7 (this node speaks 6)"),
            (.unknownMessageKind(9), "unknown message kind 9"),
            (
                .stringTooLong(.chatText, length: 5000, max: 4096, offset: 68),
                "chat text too long: 5000 bytes at offset 68, at most 4096"
            ),
            (.controlCharacter(.nick, byte: 0x0A, offset: 40), "nick contains control character 0x0a at offset 40"),
            (
                .countExceedsData(.events, count: 1000, minimumBytes: 117_000, remaining: 10, offset: 4),
                "1000 events at offset 4 need at least 117000 bytes, 10 left"
            ),
            (.frameTooLarge(length: .max, max: 4_194_304), "frame of 4294967295 bytes exceeds the maximum of 4194304"),
        ]
        for (error, text) in cases {
            #expect(error.description == text)
        }
    }
}
