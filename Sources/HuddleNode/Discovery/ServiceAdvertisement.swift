public import HuddleCore

/// What a node tells the LAN about itself over DNS-SD: one `_huddle._tcp` service on its port,
/// named ``instanceName(attempt:)``, with a TXT record (``txtRecord()``) of five keys:
///
/// | Key       | Value                                   | Example            |
/// |-----------|-----------------------------------------|--------------------|
/// | `txtvers` | version of this TXT layout, always first | `1`               |
/// | `id`      | the node id, 64 lowercase hex digits     | `3f9a0c1e22b4...` |
/// | `nick`    | the display name, at most 64 bytes       | `alice`           |
/// | `proto`   | the wire protocol version                | `3`               |
/// | `rooms`   | the node's rooms, comma-separated        | `superbowl,nfl`   |
///
/// The whole record stays within ``maxTXTBytes``: rooms that do not fit are left out, keeping a
/// prefix of ``rooms`` (see ``advertisedRooms``). Pure value, no I/O.
///
/// ```swift
/// let ad = ServiceAdvertisement(id: identity.id, nick: "alice", port: 7700, rooms: ["superbowl"])
/// ad.instanceName()   // "alice (3f9a0c1e22b4)"
/// let txt = ad.txtRecord()
/// let back = try ServiceAdvertisement.parse(txt: txt, port: 7700)   // == ad
/// ```
public struct ServiceAdvertisement: Hashable, Sendable {
    /// The DNS-SD service type every node registers and browses.
    public static let serviceType = "_huddle._tcp"
    /// The version of the TXT layout, sent as `txtvers`.
    public static let txtVersion = 1
    /// Most bytes ``txtRecord()`` produces; well under the 400 bytes DNS-SD suggests (RFC 6763
    /// §6.2) so the record fits in one packet with the SRV and address records.
    public static let maxTXTBytes = 300
    /// Longest instance name dns_sd accepts, in UTF-8 bytes (a DNS label).
    public static let maxInstanceNameBytes = 63

    /// The node's id.
    public var id: NodeID
    /// The node's display name. Control characters are dropped and it is cut to
    /// ``WireLimits/maxNickBytes`` when encoded.
    public var nick: String
    /// The port the node listens on (TCP and UDP).
    public var port: UInt16
    /// The node's rooms, most important first: when they do not all fit, the first ones are kept.
    public var rooms: [String]
    /// The wire protocol version the node speaks (`proto`).
    public var protocolVersion: Int

    /// An advertisement of a node speaking `protocolVersion` (this build's by default).
    public init(
        id: NodeID, nick: String, port: UInt16, rooms: [String],
        protocolVersion: Int = Int(WireProtocol.version)
    ) {
        self.id = id
        self.nick = nick
        self.port = port
        self.rooms = rooms
        self.protocolVersion = protocolVersion
    }

    // MARK: Encoding

    /// The TXT record: `txtvers` first, then `id`, `nick`, `proto`, `rooms`; at most
    /// ``maxTXTBytes`` bytes.
    public func txtRecord() -> [UInt8] {
        let fixed = fixedEntries
        return TXTRecord.encode(fixed + [("rooms", advertisedRooms(after: fixed).joined(separator: ","))])
    }

    /// The rooms ``txtRecord()`` carries: ``rooms`` without the ones no TXT can carry (empty,
    /// over ``WireLimits/maxRoomBytes`` bytes, containing a comma or a control character) and
    /// without repeats, then cut to the longest prefix that fits in ``maxTXTBytes`` and
    /// ``WireLimits/maxRoomsPerNode``. The same rooms always give the same result.
    public var advertisedRooms: [String] { advertisedRooms(after: fixedEntries) }

    private var fixedEntries: [(key: String, value: String)] {
        [
            ("txtvers", String(Self.txtVersion)),
            ("id", id.hex),
            ("nick", Self.cleanNick(nick, maxBytes: WireLimits.maxNickBytes)),
            ("proto", String(protocolVersion)),
        ]
    }

    private func advertisedRooms(after fixed: [(key: String, value: String)]) -> [String] {
        let used = fixed.reduce(0) { $0 + TXTRecord.encodedByteCount(key: $1.key, value: $1.value) }
        var budget = Self.maxTXTBytes - used - TXTRecord.encodedByteCount(key: "rooms", value: "")
        var kept = [String]()
        var seen = Set<String>()
        for room in rooms where Self.isAdvertisable(room) && !seen.contains(room) {
            let cost = room.utf8.count + (kept.isEmpty ? 0 : 1)
            guard cost <= budget, kept.count < WireLimits.maxRoomsPerNode else { break }
            budget -= cost
            kept.append(room)
            seen.insert(room)
        }
        return kept
    }

    private static func isAdvertisable(_ room: String) -> Bool {
        !room.isEmpty && room.utf8.count <= WireLimits.maxRoomBytes && !room.utf8.contains(UInt8(ascii: ","))
            && !room.unicodeScalars.contains(where: isControl)
    }

    // MARK: Instance names

    /// The service instance name: `NICK (idprefix)`, with the 12-digit id prefix that
    /// ``NodeID/description`` prints, so two nodes never ask for the same name. Attempts after
    /// the first (after a name conflict) add ` #2`, ` #3`, ... The nick is cut so the name stays
    /// within ``maxInstanceNameBytes``; an empty nick becomes `huddle`.
    ///
    /// ```swift
    /// ad.instanceName()            // "alice (3f9a0c1e22b4)"
    /// ad.instanceName(attempt: 2)  // "alice (3f9a0c1e22b4) #2"
    /// ```
    public func instanceName(attempt: Int = 1) -> String {
        let suffix = " (\(id.description))" + (attempt > 1 ? " #\(attempt)" : "")
        let room = Self.maxInstanceNameBytes - suffix.utf8.count
        var name = Self.cleanNick(nick, maxBytes: room).trimmingWhitespace()
        if name.isEmpty { name = "huddle" }
        return name + suffix
    }

    // MARK: Parsing

    /// Reads a peer's advertisement from its TXT record (strings in any order) and the port its
    /// SRV record gave.
    ///
    /// All five keys must be there, once each: `txtvers` must be `1`, `id` 64 hex digits,
    /// `nick` at most ``WireLimits/maxNickBytes`` bytes of UTF-8 without control characters,
    /// `proto` a decimal number 0…255, `rooms` empty or at most ``WireLimits/maxRoomsPerNode``
    /// comma-separated non-empty room names, each a valid nick-like string of at most
    /// ``WireLimits/maxRoomBytes`` bytes (repeats are dropped). Other keys are ignored.
    public static func parse(txt: [UInt8], port: UInt16) throws(TXTRecordError) -> ServiceAdvertisement {
        var values = [String: [UInt8]?]()
        for entry in try TXTRecord.decode(txt) { values[entry.key] = entry.value }
        func value(_ key: String) throws(TXTRecordError) -> [UInt8] {
            guard let present = values[key] else { throw .missingKey(key) }
            guard let bytes = present else { throw .invalidValue(key: key) }
            return bytes
        }

        let version = try value("txtvers")
        guard version == Array(String(txtVersion).utf8) else {
            throw .unsupportedVersion(String(decoding: version.prefix(16), as: UTF8.self))
        }
        guard let id = NodeID(hex: String(decoding: try value("id"), as: UTF8.self)) else {
            throw .invalidValue(key: "id")
        }
        let protoBytes = try value("proto")
        guard (1...3).contains(protoBytes.count), protoBytes.allSatisfy({ (0x30...0x39).contains($0) }),
            let proto = Int(String(decoding: protoBytes, as: UTF8.self)), proto <= 255
        else { throw .invalidValue(key: "proto") }
        guard let nick = text(try value("nick"), maxBytes: WireLimits.maxNickBytes) else {
            throw .invalidValue(key: "nick")
        }
        let roomBytes = try value("rooms")
        var rooms = [String]()
        if !roomBytes.isEmpty {
            let parts = roomBytes.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
            guard parts.count <= WireLimits.maxRoomsPerNode else { throw .invalidValue(key: "rooms") }
            for part in parts {
                guard !part.isEmpty, let room = text(Array(part), maxBytes: WireLimits.maxRoomBytes) else {
                    throw .invalidValue(key: "rooms")
                }
                if !rooms.contains(room) { rooms.append(room) }
            }
        }
        return ServiceAdvertisement(id: id, nick: nick, port: port, rooms: rooms, protocolVersion: proto)
    }

    // MARK: Text rules

    /// Valid UTF-8 of at most `maxBytes` bytes without control characters, or `nil`.
    private static func text(_ bytes: [UInt8], maxBytes: Int) -> String? {
        guard bytes.count <= maxBytes, let string = String(validating: bytes, as: UTF8.self),
            !string.unicodeScalars.contains(where: isControl)
        else { return nil }
        return string
    }

    /// C0 controls and DEL, which no string on the wire may hold (the rule `WireText` applies).
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || scalar.value == 0x7F
    }

    /// `nick` without control characters, cut at a character boundary to at most `maxBytes`.
    private static func cleanNick(_ nick: String, maxBytes: Int) -> String {
        var out = ""
        var count = 0
        for character in nick where !character.unicodeScalars.contains(where: isControl) {
            let size = character.utf8.count
            guard count + size <= maxBytes else { break }
            out.append(character)
            count += size
        }
        return out
    }
}

