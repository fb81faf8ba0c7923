/// A few seconds of what a listening node heard, as it shares them with one peer: one 32-bit
/// sub-fingerprint and one loudness flag per 10 ms frame (docs/AUDIO.md), timestamped on the
/// sender's clock, sealed for that peer alone with the pair's key (``RoomKey/open(_:for:)``) and
/// signed by the sender. Wire kind 11 (docs/PROTOCOL.md, "11 · soundWindow"). Which windows
/// leave at all, and to whom, is ``SoundSharing``'s to say.
///
/// Ephemeral on purpose: a window is not an event. It has no seq, is not stored, not pulled,
/// not repaired; a receiver keeps the last couple of minutes per peer and forgets the rest. What
/// lasts is what a node found in it about its own sound, published as a `heard` event.
///
///     0      4         36         +2+n        +8            +8          +2
///     +------+---------+==========+-----------+-------------+-----------+======+-----------+
///     | env  | from:id | room:str | sentAt:i64| start:i64   | frames:u16| data | sig:64    |
///     +------+---------+==========+-----------+-------------+-----------+======+-----------+
///     data:   nonce:12, the ChaCha20-Poly1305 ciphertext of the frames' public form, tag:16
///     public form: bits: u32 × frames, then loud: ⌈frames/8⌉ bytes, frame i in bit i % 8
///                  (lowest first) of byte i / 8, unused bits 0; a quiet frame's bits are 0
///
/// ```swift
/// let window = SoundWindow.made(by: identity, room: "superbowl", for: bob, pairKey: key, sentAt: now,
///                               start: firstFrameAt, bits: bits, loud: loud)
/// let bytes = window.encoded()                 // one datagram: 158 + 4.125 bytes a frame
/// let back = try SoundWindow(decoding: bytes)  // then: back.hasValidSignature, key.open(back, for: bob)
/// ```
public struct SoundWindow: Hashable, Sendable {
    /// The node that heard it (and signed it).
    public var from: NodeID
    /// The room it was shared with: a public room's name or a private room's id.
    public var room: String
    /// The sender's wall clock when it sent the window, to the ms (the wire's unit): a receiver
    /// compares it with its own clock to centre its search on the two machines' clock difference.
    public var sentAt: WallTime {
        get { .milliseconds(sinceEpoch: sentAtMilliseconds) }
        set { sentAtMilliseconds = newValue.millisecondsSinceEpoch }
    }
    /// The sender's wall clock at frame 0, to the ms; frame i is `start + 10 ms · i`.
    public var start: WallTime {
        get { .milliseconds(sinceEpoch: startMilliseconds) }
        set { startMilliseconds = newValue.millisecondsSinceEpoch }
    }
    /// ``sentAt`` and ``start`` as the wire carries them and the signature covers them: ms since
    /// the epoch, any `i64`, kept as they came (see ``Event/createdAt``).
    var sentAtMilliseconds: Int64
    var startMilliseconds: Int64
    /// How many frames the window holds (1 … ``WireLimits/maxSoundFrames``).
    public var frameCount: Int
    /// One sub-fingerprint per frame; empty in a window not opened yet.
    public var bits: [UInt32]
    /// Whether each frame was loud enough to compare; empty in a window not opened yet.
    public var loud: [Bool]
    /// The frames as they travel, sealed for the receiver (the signature covers them).
    public var seal: [UInt8]
    /// Ed25519 by `from` over ``signedBytes``.
    public var signature: [UInt8]

    /// A window as given; its times are kept to the ms, rounded down (as the wire carries them).
    public init(
        from: NodeID, room: String, sentAt: WallTime, start: WallTime, bits: [UInt32], loud: [Bool],
        seal: [UInt8] = [], frameCount: Int? = nil, signature: [UInt8] = WireMessage.unsignedMembership
    ) {
        self.init(
            from: from, room: room, sentAtMilliseconds: sentAt.millisecondsSinceEpoch,
            startMilliseconds: start.millisecondsSinceEpoch, bits: bits, loud: loud, seal: seal, frameCount: frameCount,
            signature: signature)
    }

    /// A window as the wire carries it: its times in ms since the epoch, whatever the values.
    init(
        from: NodeID, room: String, sentAtMilliseconds: Int64, startMilliseconds: Int64, bits: [UInt32], loud: [Bool],
        seal: [UInt8] = [], frameCount: Int? = nil, signature: [UInt8] = WireMessage.unsignedMembership
    ) {
        self.from = from
        self.room = room
        self.sentAtMilliseconds = sentAtMilliseconds
        self.startMilliseconds = startMilliseconds
        self.frameCount = frameCount ?? bits.count
        self.bits = bits
        self.loud = loud
        self.seal = seal
        self.signature = signature
    }

    /// The envelope's kind byte.
    public static let kind: UInt8 = 11
    /// The domain-separation tag that starts ``signedBytes``.
    public static let signingDomain: [UInt8] = Array("huddle-sound-v1".utf8) + [0]

    /// Whether the frames are readable here: a window opened with the pair key, or not sealed yet.
    public var isOpen: Bool { bits.count == frameCount && loud.count == frameCount }

    /// Bytes of the public form of `frames` frames' data.
    public static func plainDataBytes(frames: Int) -> Int { 4 * frames + (frames + 7) / 8 }

    /// The window made by `identity` for `receiver` in `room`, as it travels (and decodes): its
    /// frames sealed with the pair's key `pairKey` (their direct-message key), signed. Quiet
    /// frames' bits are zeroed, as the wire requires.
    public static func made(
        by identity: NodeIdentity, room: String, for receiver: NodeID, pairKey: RoomKey, sentAt: WallTime,
        start: WallTime, bits: [UInt32], loud: [Bool], nonce: [UInt8]? = nil
    ) -> SoundWindow {
        var window = unsealed(by: identity.id, room: room, sentAt: sentAt, start: start, bits: bits, loud: loud)
        window.seal = pairKey.seal(window, for: receiver, nonce: nonce)
        (window.bits, window.loud) = ([], [])  // as it travels, and as it decodes
        window.signature = identity.signature(for: window.signedBytes)
        return window
    }

    /// The window's frames as the receiver reads them once opened, before sealing and signing:
    /// what `huddle align --dump-features` prints and the privacy bench's eavesdropper reads.
    public static func unsealed(
        by sender: NodeID, room: String, sentAt: WallTime, start: WallTime, bits: [UInt32], loud: [Bool]
    ) -> SoundWindow {
        precondition(bits.count == loud.count, "one loudness flag per frame")
        let quietZeroed = zip(bits, loud).map { $1 ? $0 : 0 }
        return SoundWindow(from: sender, room: room, sentAt: sentAt, start: start, bits: quietZeroed, loud: loud)
    }

    /// `"huddle-sound-v1" 0x00` and the encoding without the signature, envelope included.
    public var signedBytes: [UInt8] { Self.signingDomain + encoded().dropLast(Event.signatureByteCount) }

    /// Whether `signature` is `from`'s over ``signedBytes``.
    public var hasValidSignature: Bool { from.isSignature(signature, over: signedBytes) }

    /// Seconds of sound it covers.
    public var duration: Double { Double(frameCount) / 100 }
}

// MARK: - Codec

extension SoundWindow {
    /// One datagram: envelope (version ``WireProtocol/version``, kind 11) and the fields.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: encodedByteCount)
        writer.write(WireProtocol.magic)
        writer.write(WireProtocol.version)
        writer.write(Self.kind)
        writer.write(from)
        writer.write(string: room)
        writer.write(sentAtMilliseconds)
        writer.write(startMilliseconds)
        writer.write(UInt16(truncatingIfNeeded: frameCount))
        writer.write(bytes: seal)
        writer.write(signature: signature)
        return writer.bytes
    }

    /// Bytes of ``encoded()``.
    public var encodedByteCount: Int {
        WireProtocol.envelopeByteCount + NodeID.byteCount + 2 + room.utf8.count + 8 + 8 + 2
            + seal.count + Event.signatureByteCount
    }

    /// The frames' public form: bits (big-endian u32 each), then the loudness bits packed. It
    /// never travels as it is: only sealed (``seal``).
    var plainData: [UInt8] {
        var writer = ByteWriter(capacity: Self.plainDataBytes(frames: bits.count))
        for word in bits { writer.write(word) }
        var byte: UInt8 = 0
        for (index, isLoud) in loud.enumerated() {
            if isLoud { byte |= 1 << UInt8(index % 8) }
            if index % 8 == 7 {
                writer.write(byte)
                byte = 0
            }
        }
        if loud.count % 8 != 0 { writer.write(byte) }
        return writer.bytes
    }

    /// What the receiver reads once it opened the window, as `huddle align --dump-features`
    /// prints it: start:i64 frames:u16, then the frames' public form.
    public var openedForm: [UInt8] {
        var writer = ByteWriter(capacity: 10 + Self.plainDataBytes(frames: frameCount))
        writer.write(startMilliseconds)
        writer.write(UInt16(truncatingIfNeeded: frameCount))
        writer.write(bytes: plainData)
        return writer.bytes
    }

    /// Decodes one datagram of kind 11, exactly: envelope, fields, sealed frames, signature,
    /// nothing after. The window comes back sealed: open it with ``RoomKey/open(_:for:)``. Checks
    /// the format only; verify the signature before using it.
    public init(decoding bytes: some Collection<UInt8>) throws(WireError) {
        var reader = ByteReader(bytes)
        let kind = try reader.readEnvelope()
        guard kind == Self.kind else { throw .unknownMessageKind(kind) }
        let from = try reader.readNodeID()
        let room = try reader.readString(.room, maxBytes: WireLimits.maxRoomBytes)
        let sentAt = try reader.readInt64()
        let start = try reader.readInt64()  // both ms, kept as they are
        let countOffset = reader.offset
        let frames = Int(try reader.readUInt16())
        guard (1...WireLimits.maxSoundFrames).contains(frames) else {
            throw .lengthOutOfRange(.soundFrames, length: frames, min: 1, max: WireLimits.maxSoundFrames, offset: countOffset)
        }
        let seal = Array(try reader.readBytes(Self.plainDataBytes(frames: frames) + WireLimits.sealOverheadBytes))
        let signature = Array(try reader.readBytes(Event.signatureByteCount))
        try reader.expectEnd()
        self.init(
            from: from, room: room, sentAtMilliseconds: sentAt, startMilliseconds: start, bits: [], loud: [],
            seal: seal, frameCount: frames, signature: signature)
    }

    /// Reads `frames` frames' public form, refusing anything but its one encoding: quiet frames
    /// carry no bits, unused flag bits are 0.
    static func readFrames(_ frames: Int, from reader: inout ByteReader) throws(WireError) -> ([UInt32], [Bool]) {
        try reader.require(plainDataBytes(frames: frames))
        let bitsOffset = reader.offset
        var bits = [UInt32](repeating: 0, count: frames)
        for index in 0..<frames { bits[index] = try reader.readUInt32() }
        var loud = [Bool](repeating: false, count: frames)
        for byteIndex in 0..<(frames + 7) / 8 {
            let at = reader.offset
            let byte = try reader.readUInt8()
            let used = min(8, frames - byteIndex * 8)
            guard used == 8 || byte >> UInt8(used) == 0 else { throw .nonCanonicalSound(offset: at) }
            for bit in 0..<used { loud[byteIndex * 8 + bit] = byte & (1 << UInt8(bit)) != 0 }
        }
        for index in 0..<frames where !loud[index] && bits[index] != 0 {
            throw .nonCanonicalSound(offset: bitsOffset + 4 * index)
        }
        return (bits, loud)
    }
}
