/// "Pass this on to `to`": a datagram one node sends a peer it cannot reach, through a live common
/// peer (the *relay*), which forwards the whole datagram, unchanged, to the address it knows for
/// `to`. Kind 10 of the envelope.
///
///     0      4              36             68            70
///     +------+--------------+--------------+-------------+==================================+
///     | env  | from: id     | to: id       | length: u16 | payload: bytes<length>           |
///     +------+--------------+--------------+-------------+==================================+
///                                                          one whole datagram, envelope and all:
///                                                          events (1), probe (5), ack (6),
///                                                          leaving (9) or a sound window (11),
///                                                          as its sender signed it
///
/// A relay is not a ``WireMessage``: it is a wrapper around one (or a ``SoundWindow``), for UDP
/// only, and a relay never holds a relay (a payload of kind 10 does not decode as a ``Datagram``),
/// so a relayed datagram is never relayed again. Only payloads that prove themselves travel:
/// events carry their origin's signature, probes, acks, goodbyes and sound windows their
/// sender's, and a payload signed by its sender must be `from`'s own. Nothing of the payload is
/// changed on the way, so the target checks the same signatures it would check had the datagram
/// come straight.
///
/// ```swift
/// let inner = identity.signed(.probe(probe)).encoded()
/// let datagram = RelayMessage(from: me, to: bob, payload: inner).encoded()   // to carol's address
/// let relay = try RelayMessage(decoding: datagram)                           // relay.message is the probe
/// ```
public struct RelayMessage: Hashable, Sendable {
    /// The envelope's kind byte of a relay.
    public static let kind: UInt8 = 10
    /// Bytes before the payload: envelope, `from`, `to`, the length.
    public static let headerByteCount = WireProtocol.envelopeByteCount + 2 * NodeID.byteCount + 2
    /// The largest payload: what is left of one datagram (``WireLimits/maxDatagramBytes``) after
    /// the header, 59 930 bytes. A sender relays only messages this small.
    public static let maxPayloadBytes = WireLimits.maxDatagramBytes - headerByteCount
    /// The message kinds a relay carries: each proves itself by a signature.
    public static let relayableKinds: Set<WireMessage.Kind> = [.events, .probe, .ack, .leaving]

    /// The node the payload is from (for a membership payload, its signer).
    public var from: NodeID
    /// The node it is for.
    public var to: NodeID
    /// The relayed datagram as it travels (its encoding, signatures included).
    public let payload: [UInt8]
    /// The payload, decoded.
    public let content: Datagram

    /// The payload, if it is a message (not a sound window).
    public var message: WireMessage? {
        if case .message(let message) = content { message } else { nil }
    }

    /// Wraps an encoded datagram. `nil` unless `payload` is exactly one message of a relayable
    /// kind or one sound window, at most ``maxPayloadBytes`` long.
    public init?(from: NodeID, to: NodeID, payload: [UInt8]) {
        guard payload.count <= Self.maxPayloadBytes, let content = try? Datagram(decoding: payload),
            Self.isRelayable(content)
        else { return nil }
        self.from = from
        self.to = to
        self.payload = payload
        self.content = content
    }

    /// Whether a relay may carry `content`: a message of a relayable kind, or a sound window.
    public static func isRelayable(_ content: Datagram) -> Bool {
        switch content {
        case .message(let message): relayableKinds.contains(message.kind)
        case .sound: true
        }
    }

    /// Whether `bytes` say in their envelope that they are a relay (magic, this version, kind 10):
    /// read before decoding, so a shell can hand relays and messages to different decoders.
    public static func isRelay(_ bytes: some Collection<UInt8>) -> Bool {
        WireProtocol.kind(of: bytes) == kind
    }

    /// Decodes one relay datagram: the envelope (kind 10), the ids, a length from 4 to
    /// ``maxPayloadBytes`` (checked before anything is read), and a payload that decodes as one
    /// message of a relayable kind, with nothing after it. Never traps.
    public init(decoding bytes: some Collection<UInt8>) throws(WireError) {
        var reader = ByteReader(bytes)
        let kind = try reader.readEnvelope()
        guard kind == Self.kind else { throw .unknownMessageKind(kind) }
        from = try reader.readNodeID()
        to = try reader.readNodeID()
        let at = reader.offset
        let length = Int(try reader.readUInt16())
        guard (WireProtocol.envelopeByteCount...Self.maxPayloadBytes).contains(length) else {
            throw .lengthOutOfRange(
                .relayPayload, length: length, min: WireProtocol.envelopeByteCount, max: Self.maxPayloadBytes,
                offset: at)
        }
        payload = Array(try reader.readBytes(length))
        try reader.expectEnd()
        let inner: Datagram
        do {
            inner = try Datagram(decoding: payload)
        } catch .unknownMessageKind(Self.kind) {
            throw .notRelayable(kind: Self.kind, offset: at + 2)
        }
        if case .message(let message) = inner, !Self.relayableKinds.contains(message.kind) {
            throw .notRelayable(kind: message.kind.rawValue, offset: at + 2)
        }
        content = inner
    }

    /// The relay as one datagram.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.headerByteCount + payload.count)
        writer.write(WireProtocol.magic)
        writer.write(WireProtocol.version)
        writer.write(Self.kind)
        writer.write(from)
        writer.write(to)
        writer.write(UInt16(clamping: payload.count))
        writer.write(bytes: payload)
        return writer.bytes
    }

    /// The node that signed the payload, for a membership payload or a sound window (`nil` for
    /// events, which each carry their origin's signature).
    public var signer: NodeID? {
        switch content {
        case .message(.probe(let probe)): probe.from
        case .message(.ack(let ack)): ack.from
        case .message(.leaving(let leaving)): leaving.from
        case .message: nil
        case .sound(let window): window.from
        }
    }

    public static func == (a: RelayMessage, b: RelayMessage) -> Bool {
        (a.from, a.to, a.payload) == (b.from, b.to, b.payload)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(from)
        hasher.combine(to)
        hasher.combine(payload)
    }
}
