/// One origin's contiguous events in a room log (``RoomLog``), held as packed bytes and decoded
/// when read: element `i` is the event of seq `i + 1`.
///
/// Held as ``Event`` values, an event cost ~700 bytes of heap: 160 inline, and an allocation
/// each for its signature, its text and its context, with the allocator's rounding on each. Here
/// each event is one record in a shared byte chunk, with what its place already says left out:
///
///     record  = flags:u8 previous:32 createdAt:i64 [context:vv] wireBody signature:64 [openedBody]
///     flags   = 1 hole · 2 the context's own entry (origin: seq − 1) left out ·
///               4 an opened private event (its opened body follows the signature) ·
///               8 kept whole (below) · 16 no context: the one the record before has
///
/// The origin, the seq and the room are the log's and the slot's. A writer's events while no one
/// else writes all have one context but for their own entry: up to 16 records in a row share the
/// one the first of them writes out (a context naming one other member is 42 bytes). The fields
/// are written as the wire writes them (`Event+Wire`), so a record decodes with the wire's own
/// reader. A hole is its flags byte alone. An event that would not read back the same (a
/// signature not 64 bytes long, a field past the wire's limits: only a test makes one) is kept
/// whole beside the chunks.
///
/// Chunks hold 512 records, as ``ChunkedArray``: a full chunk is never copied again. So a stored
/// event costs its record (~110 bytes and its text, for a chat line) and 4 bytes of index.
struct PackedEvents: RandomAccessCollection, Sendable {
    private struct Chunk: Sendable {
        var bytes: [UInt8] = []
        /// Where each record ends in ``bytes``; a record starts where the one before it ends.
        var ends: [UInt32] = []
    }

    private enum Flag {
        static let hole: UInt8 = 1
        static let ownEntryLeftOut: UInt8 = 2
        static let opened: UInt8 = 4
        static let keptWhole: UInt8 = 8
        static let contextAsBefore: UInt8 = 16
    }

    /// How many records in a row may share one context written out: reading one walks back at
    /// most this far.
    private static var maxSharedRun: Int { 16 }

    let origin: NodeID
    let room: String
    private var chunks: [Chunk] = []
    /// Events that would not pack (see the type's doc), by index.
    private var whole: [Int: Event] = [:]
    /// The last event appended, as it came: read at once to deliver it, and to link the origin's
    /// next event to it, so kept whole as well (one an origin).
    private var newest: Event?
    /// The context (less the origin's own entry) of the last record that wrote one out, and how
    /// many records since have shared it; `nil` after a hole, an event kept whole or a cut.
    private var lastContext: (context: VersionVector, sharedBy: Int)?
    private(set) var count = 0

    init(origin: NodeID, room: String) {
        self.origin = origin
        self.room = room
    }

    /// How many events are kept whole, not packed.
    var keptWholeCount: Int { whole.count }

    /// The bytes of every record together.
    var recordBytes: Int { chunks.reduce(0) { $0 + $1.bytes.count } }

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(index: Int) -> Event {
        precondition(index >= 0 && index < count, "index out of range")
        if index == count - 1, let newest { return newest }
        let seq = UInt64(index) + 1
        let record = self.record(at: index)
        let flags = record[record.startIndex]
        if flags & Flag.hole != 0 { return .hole(EventID(origin: origin, seq: seq), room: room) }
        if flags & Flag.keptWhole != 0 { return whole[index]! }
        // A record was written by `append` and read back once there, so it reads.
        return try! decode(record, flags: flags, seq: seq)
    }

    /// Whether the event at `index` is a hole, without decoding it.
    func isHole(at index: Int) -> Bool {
        let record = self.record(at: index)
        return record[record.startIndex] & Flag.hole != 0
    }

    /// Appends the origin's next event: `event.origin` must be ``origin``, `event.seq` must be
    /// `count + 1`, `event.room` ``room``.
    mutating func append(_ event: Event) {
        precondition(event.origin == origin && event.seq == UInt64(count) + 1, "not the origin's next event")
        if Chunking.place(of: count) == 0 { startChunk() }
        let last = chunks.count - 1
        if event.isHole {
            chunks[last].bytes.append(Flag.hole)
            lastContext = nil
        } else if let (packed, context) = pack(event),
            (try? decode(packed[...], flags: packed[0], seq: event.seq)) == event
        {
            chunks[last].bytes.append(contentsOf: packed)
            if packed[0] & Flag.contextAsBefore != 0 {
                lastContext?.sharedBy += 1
            } else {
                lastContext = context.map { ($0, 0) }
            }
        } else {
            chunks[last].bytes.append(Flag.keptWhole)
            whole[count] = event
            lastContext = nil
        }
        chunks[last].ends.append(UInt32(chunks[last].bytes.count))
        count += 1
        newest = event
        if Chunking.place(of: count) == 0 { chunks[last].bytes.shrinkToFit() }
    }

    /// Starts a chunk. The first grows as it fills (an origin with one event holds one record's
    /// room); a later one is made an eighth larger than the one before it ended, at once: grown by
    /// doubling, its bytes would be copied eight times over. A chunk filled is cut to its size.
    private mutating func startChunk() {
        var chunk = Chunk()
        if let previous = chunks.last {
            chunk.bytes.reserveCapacity(previous.bytes.count + previous.bytes.count / 8)
            chunk.ends.reserveCapacity(Chunking.size)
        }
        chunks.append(chunk)
    }

    /// Removes the events from `range.lowerBound` on.
    mutating func removeSubrange(_ range: PartialRangeFrom<Int>) {
        let kept = Swift.max(0, Swift.min(range.lowerBound, count))
        chunks.removeSubrange(Chunking.chunks(holding: kept)...)
        if let last = chunks.indices.last {
            chunks[last].ends.removeSubrange(Chunking.kept(of: kept, inChunk: last)...)
            chunks[last].bytes.removeSubrange(Int(chunks[last].ends.last ?? 0)...)
        }
        whole = whole.filter { $0.key < kept }
        if kept < count {
            newest = nil
            lastContext = nil
        }
        count = kept
    }

    private func record(at index: Int) -> ArraySlice<UInt8> {
        let chunk = chunks[Chunking.chunk(of: index)]
        let position = Chunking.place(of: index)
        let start = position == 0 ? 0 : Int(chunk.ends[position - 1])
        return chunk.bytes[start..<Int(chunk.ends[position])]
    }

    /// The event's record, and its context less its own entry when the record could be shared
    /// by the next; `nil` if its signature is not 64 bytes long. An event whose context is the
    /// last one written out's (a writer's lines while nobody else writes) writes none.
    private func pack(_ event: Event) -> (record: [UInt8], context: VersionVector?)? {
        guard event.signature.count == Event.signatureByteCount else { return nil }
        var context = event.context
        var flags: UInt8 = 0
        if context[event.origin] == event.seq - 1 {
            context[event.origin] = 0
            flags |= Flag.ownEntryLeftOut
        }
        if flags & Flag.ownEntryLeftOut != 0, let lastContext, lastContext.sharedBy < Self.maxSharedRun - 1,
            lastContext.context == context
        {
            flags |= Flag.contextAsBefore
        }
        if event.seal != nil { flags |= Flag.opened }
        var writer = ByteWriter(capacity: 1 + event.encodedByteCount)
        writer.write(flags)
        writer.write(event.previous.raw)
        writer.write(event.createdAtMilliseconds)
        if flags & Flag.contextAsBefore == 0 { writer.write(context) }
        writer.write(event.wireBody)
        writer.write(signature: event.signature)
        if event.seal != nil { writer.write(event.body) }
        return (writer.bytes, flags & Flag.ownEntryLeftOut != 0 ? context : nil)
    }

    private func decode(_ record: ArraySlice<UInt8>, flags: UInt8, seq: UInt64) throws(WireError) -> Event {
        var reader = ByteReader(record)
        _ = try reader.readUInt8()
        let previous = EventDigest(bytes: try reader.readBytes(EventDigest.byteCount))!
        let createdAt = try reader.readInt64()
        var context =
            flags & Flag.contextAsBefore != 0 ? try sharedContext(before: Int(seq) - 1) : try reader.readVersionVector()
        if flags & Flag.ownEntryLeftOut != 0 { context[origin] = seq - 1 }
        let wireBody = try reader.readEventBody()
        let signature = Array(try reader.readBytes(Event.signatureByteCount))
        var body = wireBody
        var seal: [UInt8]?
        if flags & Flag.opened != 0, case .sealed(let bytes) = wireBody {
            body = try reader.readEventBody()
            seal = bytes
        }
        try reader.expectEnd()
        return Event(
            id: EventID(origin: origin, seq: seq), room: room, createdAtMilliseconds: createdAt, context: context,
            previous: previous, body: body, seal: seal, signature: signature)
    }
}

extension PackedEvents {
    /// The context a record that shares one reads: the one written out by the last record before
    /// `index` that wrote one (at most ``maxSharedRun`` back).
    private func sharedContext(before index: Int) throws(WireError) -> VersionVector {
        var index = index - 1
        while index >= 0 {
            let record = self.record(at: index)
            if record[record.startIndex] & Flag.contextAsBefore == 0 {
                var reader = ByteReader(record)
                _ = try reader.readBytes(1 + EventDigest.byteCount + 8)
                return try reader.readVersionVector()
            }
            index -= 1
        }
        preconditionFailure("a record shares the context of none")
    }
}

extension [UInt8] {
    /// Copies the bytes into an array with no room to spare, if this one has more than a little.
    fileprivate mutating func shrinkToFit() {
        guard capacity > count + count / 64 else { return }
        self = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = withUnsafeBufferPointer { buffer.initialize(fromContentsOf: $0) }
        }
    }
}
