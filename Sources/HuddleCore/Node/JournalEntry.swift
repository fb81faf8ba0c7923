/// An entry of the node's commit journal: the writes a turn landed there, with their number, as
/// bytes and back. The file, its appends and its replay are the shell's (`CommitJournal`); this
/// is the format, written with the wire's byte writer and read with its bounds-checked reader.
///
///     entry   = length:u32 number:u64 check:u64 payload<length>
///     payload = events (the wire's: count:u16 event*)  count:u16 shown*
///     shown   = room:str16 at:i64 count:u16 (origin:32 seq:u64)*
///
/// big-endian as on the wire, `check` the FNV-1a hash of `number` and the payload, numbers
/// rising by one: a torn or stale entry ends what is read back.
public struct JournalEntry: Equatable, Sendable {
    public var number: UInt64
    public var writes: [StoreWrite]

    public init(number: UInt64, writes: [StoreWrite]) {
        self.number = number
        self.writes = writes
    }

    /// The most events (and shown records) one entry holds.
    public static let maximumEvents = 64

    /// Whether every write in `writes` is of a kind an entry holds, and they are few: the journal
    /// is for a line's way (a typed line, a push of a few events). A piped burst's run or a
    /// pull's batch goes the store's way only, not written twice.
    public static func canHold(_ writes: [StoreWrite]) -> Bool {
        var events = 0
        for write in writes {
            switch write {
            case .events(let some, _): events += some.count
            case .shown(let ids, _, _): events += ids.count
            default: return false
            }
        }
        return events <= maximumEvents
    }

    static let headerByteCount = 4 + 8 + 8

    /// The bytes of entry `number` holding `writes` (``canHold(_:)``).
    public static func bytes(_ writes: [StoreWrite], number: UInt64) -> [UInt8] {
        var payload = ByteWriter()
        payload.write(events: writes.flatMap { write -> [Event] in
            if case .events(let events, _) = write { events } else { [] }
        })
        let shown = writes.compactMap { write -> ([EventID], String, WallTime)? in
            if case .shown(let ids, let room, let at) = write { (ids, room, at) } else { nil }
        }
        payload.write(count: shown.count)
        for (ids, room, at) in shown {
            payload.write(string: room)
            payload.write(at.millisecondsSinceEpoch)
            payload.write(count: ids.count)
            for id in ids {
                payload.write(id.origin)
                payload.write(id.seq)
            }
        }
        var entry = ByteWriter(capacity: headerByteCount + payload.count)
        entry.write(UInt32(payload.count))
        entry.write(number)
        entry.write(check(number: number, payload.bytes[...]))
        entry.write(bytes: payload.bytes)
        return entry.bytes
    }

    /// The entries at the start of `bytes` that are whole, checked and numbered one past the one
    /// before; the first that is not ends them (a write a crash tore, or what a power cut left
    /// of the file).
    public static func entries(in bytes: [UInt8]) -> [JournalEntry] {
        var entries: [JournalEntry] = []
        var reader = ByteReader(bytes[...])
        while let length = try? reader.readUInt32(), let number = try? reader.readUInt64(),
            let check = try? reader.readUInt64(), let payload = try? reader.readBytes(Int(length)),
            check == Self.check(number: number, payload),
            entries.last.map({ number == $0.number + 1 }) ?? true,
            let writes = try? writes(in: payload)
        {
            entries.append(JournalEntry(number: number, writes: writes))
        }
        return entries
    }

    /// A payload's writes: its events in one write a room (the store takes whose they are from
    /// the events; only the gate cares), then its shown records.
    private static func writes(in payload: ArraySlice<UInt8>) throws(WireError) -> [StoreWrite] {
        var reader = ByteReader(payload)
        var byRoom: [(room: String, events: [Event])] = []
        for event in try reader.readEvents() {
            if let last = byRoom.indices.last, byRoom[last].room == event.room {
                byRoom[last].events.append(event)
            } else {
                byRoom.append((event.room, [event]))
            }
        }
        var writes = byRoom.map { StoreWrite.events($0.events, own: false) }
        let idBytes = NodeID.byteCount + 8
        for _ in 0..<(try reader.readCount(.events, max: maximumEvents, minElementBytes: 2 + 8 + 2)) {
            let room = try reader.readString(.room, maxBytes: WireLimits.maxRoomBytes)
            let at = WallTime.milliseconds(sinceEpoch: try reader.readInt64())
            var ids: [EventID] = []
            for _ in 0..<(try reader.readCount(.events, max: maximumEvents, minElementBytes: idBytes)) {
                ids.append(EventID(origin: try reader.readNodeID(), seq: try reader.readUInt64()))
            }
            writes.append(.shown(ids, room: room, at: at))
        }
        try reader.expectEnd()
        return writes
    }

    /// FNV-1a over `number`'s bytes and `payload`: enough to tell a torn or stale entry, which is
    /// all it is for (the file is the owner's, in a 0700 directory).
    static func check(number: UInt64, _ payload: ArraySlice<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        for shift in stride(from: 0, to: 64, by: 8) { mix(UInt8(truncatingIfNeeded: number >> UInt64(shift))) }
        for byte in payload { mix(byte) }
        return hash
    }
}
