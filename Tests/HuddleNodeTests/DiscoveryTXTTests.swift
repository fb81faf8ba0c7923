import HuddleCore
import Testing

@testable import HuddleNode

/// Node ids for the discovery tests: 32 copies of one byte.
func discoveryTestID(_ byte: UInt8) -> NodeID {
    NodeID(bytes: [UInt8](repeating: byte, count: NodeID.byteCount))!
}

/// The TXT strings of a record, in wire order, as text.
private func strings(_ txt: [UInt8]) -> [String] {
    var out = [String]()
    var index = 0
    while index < txt.count {
        let length = Int(txt[index])
        out.append(String(decoding: txt[(index + 1)..<(index + 1 + length)], as: UTF8.self))
        index += 1 + length
    }
    return out
}

/// A TXT record made of these strings, in this order.
private func record(_ strings: [String]) -> [UInt8] {
    strings.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
}

private let aliceID = discoveryTestID(0xab)
private let alice = ServiceAdvertisement(id: aliceID, nick: "alice", port: 7700, rooms: ["superbowl", "nfl"])

private let validStrings = [
    "txtvers=1", "id=" + String(repeating: "ab", count: 32), "nick=alice", "proto=\(WireProtocol.version)", "rooms=superbowl,nfl",
]

@Suite struct DiscoveryTXTTests {
    @Test func roundTrip() throws {
        let txt = alice.txtRecord()
        #expect(try ServiceAdvertisement.parse(txt: txt, port: 7700) == alice)
    }

    @Test func layoutHasTxtversFirst() {
        #expect(strings(alice.txtRecord()) == validStrings)
    }

    @Test func parseAcceptsAnyOrder() throws {
        // Avahi's compat library hands a resolver the TXT strings in reverse wire order.
        let parsed = try ServiceAdvertisement.parse(txt: record(validStrings.reversed()), port: 7700)
        #expect(parsed == alice)
    }

    @Test func parseIgnoresUnknownKeysAndEmptyStrings() throws {
        let parsed = try ServiceAdvertisement.parse(
            txt: record(validStrings + ["future=yes", "", "=orphan", "flag"]), port: 7700)
        #expect(parsed == alice)
    }

    @Test func keysAreCaseInsensitive() throws {
        let shouted = validStrings.map { $0.hasPrefix("nick") ? "NICK=alice" : $0 }
        #expect(try ServiceAdvertisement.parse(txt: record(shouted), port: 7700) == alice)
    }

    @Test func noRooms() throws {
        let lonely = ServiceAdvertisement(id: aliceID, nick: "alice", port: 1, rooms: [])
        #expect(strings(lonely.txtRecord()).last == "rooms=")
        #expect(try ServiceAdvertisement.parse(txt: lonely.txtRecord(), port: 1) == lonely)
    }

    @Test func sizeStaysWithinTheBound() {
        let longNick = String(repeating: "é", count: 100)  // 200 bytes, cut to 64
        let rooms = (0..<50).map { "room-\($0)-" + String(repeating: "x", count: 50) }
        let ad = ServiceAdvertisement(id: aliceID, nick: longNick, port: 7700, rooms: rooms)
        let txt = ad.txtRecord()
        #expect(txt.count <= ServiceAdvertisement.maxTXTBytes)
        #expect(txt.count > ServiceAdvertisement.maxTXTBytes - 64)  // it did fill up
        let parsed = try? ServiceAdvertisement.parse(txt: txt, port: 7700)
        #expect(parsed?.nick == String(repeating: "é", count: 32))
        #expect(parsed?.rooms == ad.advertisedRooms)
    }

    @Test func manyRoomsAreCutToAPrefix() {
        let rooms = (0..<100).map { "room\($0)" }
        let ad = ServiceAdvertisement(id: aliceID, nick: "alice", port: 7700, rooms: rooms)
        let kept = ad.advertisedRooms
        #expect(!kept.isEmpty)
        #expect(kept.count < rooms.count)
        #expect(kept == Array(rooms.prefix(kept.count)))
        #expect(ad.txtRecord().count <= ServiceAdvertisement.maxTXTBytes)
        // Deterministic: the same rooms give the same record.
        let again = ServiceAdvertisement(id: aliceID, nick: "alice", port: 7700, rooms: rooms)
        #expect(ad.txtRecord() == again.txtRecord())
    }

    @Test func roomsCountIsCapped() {
        let rooms = (0..<40).map { "\($0 % 10)\($0 / 10)" }  // 2 bytes each: all would fit
        let ad = ServiceAdvertisement(id: aliceID, nick: "a", port: 7700, rooms: rooms)
        #expect(ad.advertisedRooms == Array(rooms.prefix(WireLimits.maxRoomsPerNode)))
    }

    @Test func roomsNoTXTCanCarryAreLeftOut() {
        let ad = ServiceAdvertisement(
            id: aliceID, nick: "alice", port: 7700,
            rooms: ["a", "", "b,c", "tab\there", String(repeating: "x", count: 65), "a", "d"])
        #expect(ad.advertisedRooms == ["a", "d"])
    }

    @Test func controlCharactersLeaveTheNick() throws {
        let ad = ServiceAdvertisement(id: aliceID, nick: "al\u{7}i\nce", port: 7700, rooms: [])
        #expect(try ServiceAdvertisement.parse(txt: ad.txtRecord(), port: 7700).nick == "alice")
    }

    @Test func otherProtocolVersionsAreReported() throws {
        let future = ServiceAdvertisement(id: aliceID, nick: "alice", port: 7700, rooms: [], protocolVersion: 7)
        #expect(try ServiceAdvertisement.parse(txt: future.txtRecord(), port: 7700).protocolVersion == 7)
    }

    // MARK: Hostile records

    /// The valid strings with the one starting with `key=` replaced (or removed, for `nil`).
    private static func with(_ key: String, _ replacement: String?) -> [UInt8] {
        record(validStrings.compactMap { $0.hasPrefix(key + "=") ? replacement : $0 })
    }

    static let hostile: [(name: String, txt: [UInt8], error: TXTRecordError)] = [
        ("length byte past the end", record(validStrings) + [40, 65, 66], .truncated(offset: 117)),
        ("only a length byte", [5], .truncated(offset: 0)),
        ("missing id", with("id", nil), .missingKey("id")),
        ("missing txtvers", with("txtvers", nil), .missingKey("txtvers")),
        ("missing rooms", with("rooms", nil), .missingKey("rooms")),
        ("id without value", with("id", "id"), .invalidValue(key: "id")),
        ("bad hex", with("id", "id=" + String(repeating: "zz", count: 32)), .invalidValue(key: "id")),
        ("short id", with("id", "id=abab"), .invalidValue(key: "id")),
        ("duplicate key", record(validStrings + ["nick=mallory"]), .duplicateKey("nick")),
        ("duplicate key, other case", record(validStrings + ["ID=00"]), .duplicateKey("id")),
        ("txtvers 2", with("txtvers", "txtvers=2"), .unsupportedVersion("2")),
        ("proto not a number", with("proto", "proto=-1"), .invalidValue(key: "proto")),
        ("proto too large", with("proto", "proto=256"), .invalidValue(key: "proto")),
        ("nick too long", with("nick", "nick=" + String(repeating: "n", count: 65)), .invalidValue(key: "nick")),
        ("empty room", with("rooms", "rooms=a,,b"), .invalidValue(key: "rooms")),
        (
            "too many rooms", with("rooms", "rooms=" + (0..<33).map(String.init).joined(separator: ",")),
            .invalidValue(key: "rooms")
        ),
        ("oversized", [UInt8](repeating: 0, count: 513), .tooLarge(byteCount: 513)),
        ("key not ASCII", record(validStrings + ["ké=1"]), .invalidKey(offset: 117)),
    ]

    @Test func validStringsAre117Bytes() {
        #expect(record(validStrings).count == 117)  // the offsets above
    }

    @Test(arguments: 0..<hostile.count)
    func hostileRecordsAreRefused(_ index: Int) {
        let (name, txt, expected) = Self.hostile[index]
        #expect(throws: expected, "\(name)") { try ServiceAdvertisement.parse(txt: txt, port: 1) }
    }

    @Test func invalidUTF8AndControlsInValuesAreRefused() {
        let broken = Self.with("nick", nil) + [7] + Array("nick=".utf8) + [0xC3, 0x28]  // broken UTF-8
        #expect(throws: TXTRecordError.invalidValue(key: "nick")) {
            try ServiceAdvertisement.parse(txt: broken, port: 1)
        }
        let control = Self.with("rooms", "rooms=a\u{1}b")
        #expect(throws: TXTRecordError.invalidValue(key: "rooms")) {
            try ServiceAdvertisement.parse(txt: control, port: 1)
        }
    }

    /// Where each string of alice's record starts (its length byte), in wire order.
    private static let starts = validStrings.indices.map { k in validStrings[..<k].reduce(0) { $0 + 1 + $1.utf8.count } }

    /// Parses `txt`, never trapping: the advertisement or the typed reason it was refused.
    private static func outcome(_ txt: [UInt8]) -> Result<ServiceAdvertisement, TXTRecordError> {
        Result { () throws(TXTRecordError) in try ServiceAdvertisement.parse(txt: txt, port: alice.port) }
    }

    @Test func everyPrefixIsRefusedForWhatItCutOff() {
        // A cut inside a string runs past the end at that string's length byte; a cut between
        // strings lacks the first key parse asks for (txtvers, id, proto, nick, rooms).
        let txt = alice.txtRecord()
        #expect(txt.count == Self.starts.last! + 1 + validStrings.last!.utf8.count)
        for end in 0..<txt.count {
            let expected: TXTRecordError
            if let whole = Self.starts.firstIndex(of: end) {
                let present = Set(validStrings[..<whole].map { String($0.prefix { $0 != "=" }) })
                expected = .missingKey(["txtvers", "id", "proto", "nick", "rooms"].first { !present.contains($0) }!)
            } else {
                expected = .truncated(offset: Self.starts.last { $0 < end }!)
            }
            #expect(Self.outcome(Array(txt[..<end])) == .failure(expected), "cut at \(end)")
        }
        #expect(Self.outcome(txt) == .success(alice))
    }

    @Test func everySingleByteChangeParsesOrIsRefusedUnderItsKey() throws {
        // Never traps. A changed value byte is refused under that value's key, except an "=" in
        // the nick or a room, which is text like any other; anything that parses round-trips.
        let txt = alice.txtRecord()
        var parsed = 0
        for (k, string) in validStrings.enumerated() {
            let key = String(string.prefix { $0 != "=" })
            let valueStart = Self.starts[k] + 1 + key.utf8.count + 1
            for index in Self.starts[k]..<(Self.starts[k] + 1 + string.utf8.count) {
                for value: UInt8 in [0, 1, 0x3D, 0x7F, 0xFF] where value != txt[index] {
                    var mutated = txt
                    mutated[index] = value
                    let result = Self.outcome(mutated)
                    if case .success(let ad) = result {
                        parsed += 1
                        #expect(Self.outcome(ad.txtRecord()) == .success(ad), "\(mutated)")
                    }
                    guard index >= valueStart else { continue }  // a length byte or the key
                    switch key {
                    case "txtvers":
                        #expect(result == .failure(.unsupportedVersion(String(decoding: [value], as: UTF8.self))))
                    case "nick" where value == 0x3D:
                        var nick = Array("alice".utf8)
                        nick[index - valueStart] = value
                        #expect(try result.get().nick == String(decoding: nick, as: UTF8.self))
                    case "rooms" where value == 0x3D:
                        var rooms = Array("superbowl,nfl".utf8)
                        rooms[index - valueStart] = value
                        let expected = rooms.split(separator: 0x2C).map { String(decoding: $0, as: UTF8.self) }
                        #expect(try result.get().rooms == expected)
                    default:
                        #expect(result == .failure(.invalidValue(key: key)), "\(key) byte \(index) = \(value)")
                    }
                }
            }
        }
        #expect(parsed > 0)
    }

    // MARK: Instance names

    @Test func instanceNames() {
        #expect(alice.instanceName() == "alice (abababababab)")
        #expect(alice.instanceName(attempt: 2) == "alice (abababababab) #2")
        let bob = ServiceAdvertisement(id: discoveryTestID(0x01), nick: "alice", port: 7700, rooms: [])
        #expect(bob.instanceName() != alice.instanceName())
    }

    @Test func instanceNamesFitADNSLabel() {
        let long = ServiceAdvertisement(id: aliceID, nick: String(repeating: "ü", count: 60), port: 1, rooms: [])
        for attempt in [1, 2, 10, 1000] {
            let name = long.instanceName(attempt: attempt)
            #expect(name.utf8.count <= ServiceAdvertisement.maxInstanceNameBytes)
            #expect(name.hasPrefix("üü"))
            #expect(name.contains("(abababababab)"))
        }
    }

    @Test func emptyOrBlankNickGetsADefault() {
        for nick in ["", "   ", "\u{1}\u{2}"] {
            let ad = ServiceAdvertisement(id: aliceID, nick: nick, port: 1, rooms: [])
            #expect(ad.instanceName() == "huddle (abababababab)")
        }
    }
}
