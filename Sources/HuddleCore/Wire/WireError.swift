/// Why bytes from the network (or the store) could not be decoded into a ``WireMessage``,
/// an ``Event`` or a frame.
///
/// Every decode failure is one of these; the decoder never traps on any input. Offsets count
/// from the first byte of the buffer being decoded (for a message: the first magic byte).
///
/// ```swift
/// do {
///     let message = try WireMessage(decoding: datagram)
/// } catch .unsupportedVersion {
///     newerPeers += 1            // a peer speaks a newer protocol: count it, don't log it
/// } catch {
///     print(error)               // "truncated: needed 8 bytes at offset 41, 3 left"
/// }
/// ```
public enum WireError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A read ran past the end of the buffer.
    case truncated(needed: Int, offset: Int, remaining: Int)
    /// The first two bytes are not ``WireProtocol/magic`` ("HD"): not a Huddle message.
    case badMagic(UInt16)
    /// A well-formed envelope of a protocol version this node does not speak (probably a newer peer).
    case unsupportedVersion(UInt8)
    /// The envelope names a message kind that this protocol version does not define.
    case unknownMessageKind(UInt8)
    /// An event body's tag byte is not one of the six defined kinds.
    case unknownEventBody(tag: UInt8, offset: Int)
    /// A peer state byte other than 1 (alive), 2 (suspect), 3 (gone).
    case unknownPeerState(UInt8, offset: Int)
    /// A boolean byte other than 0 or 1.
    case invalidBoolean(UInt8, offset: Int)
    /// A string's byte length exceeds the field's limit (nothing was read or allocated for it).
    case stringTooLong(Field, length: Int, max: Int, offset: Int)
    /// A string's bytes are not well-formed UTF-8.
    case invalidUTF8(Field, offset: Int)
    /// A string contains a C0 control character (U+0000…U+001F) or DEL (U+007F).
    case controlCharacter(Field, byte: UInt8, offset: Int)
    /// A list's count exceeds the field's limit (nothing was allocated for it).
    case countTooLarge(Field, count: Int, max: Int, offset: Int)
    /// A list's count cannot fit in the bytes left, even if every element had its minimum size.
    case countExceedsData(Field, count: Int, minimumBytes: Int, remaining: Int, offset: Int)
    /// Version-vector entries that are not strictly ascending by origin (unsorted or duplicated).
    case unsortedVersionVector(offset: Int)
    /// A sequence number of 0 where only 1 or more is meaningful (event ids, vector entries).
    case zeroSequence(Field, offset: Int)
    /// Bytes left over after a complete message or event.
    case trailingBytes(count: Int, offset: Int)
    /// A TCP frame header announces more than the maximum frame size. The stream cannot be
    /// resynchronised after this; close the connection.
    case frameTooLarge(length: UInt32, max: Int)
    /// A length field outside the range its field allows.
    case lengthOutOfRange(Field, length: Int, min: Int, max: Int, offset: Int)
    /// A sealed body that holds another sealed body (checked before sealing, never on the wire).
    case sealedInsideSealed
    /// A picture body names a type this version does not know.
    case unknownPictureType(UInt8, offset: Int)
    /// A relay (kind 10) whose payload is a message of a kind no relay carries: one that does not
    /// prove itself by a signature (a digest), or another relay.
    case notRelayable(kind: UInt8, offset: Int)
    /// A sound window's frames not in their one encoding: a quiet frame with bits, or unused
    /// loudness bits set (new in version 5).
    case nonCanonicalSound(offset: Int)

    /// The part of a message a ``WireError`` is about.
    public enum Field: String, Hashable, Sendable, CustomStringConvertible {
        case nick
        case room
        case label
        case chatText = "chat text"
        case host
        case rooms
        case peers
        case events
        case versionVector = "version vector"
        case eventSeq = "event seq"
        case sealedBody = "sealed body"
        case caption
        case piece
        case roomTags = "room tags"
        case relayPayload = "relay payload"
        case soundFrames = "sound frames"

        public var description: String { rawValue }
    }

    /// Whether the bytes were a Huddle message from a protocol version this node does not speak.
    public var isUnsupportedVersion: Bool {
        if case .unsupportedVersion = self { true } else { false }
    }

    public var description: String {
        switch self {
        case .truncated(let needed, let offset, let remaining):
            "truncated: needed \(needed) \(needed == 1 ? "byte" : "bytes") at offset \(offset), \(remaining) left"
        case .badMagic(let magic):
            "bad magic \(hex16(magic)) (expected \(hex16(WireProtocol.magic)) \"HD\"): not a Huddle message"
        case .unsupportedVersion(let version):
            "unsupported protocol version \(version) (this node speaks \(WireProtocol.version))"
        case .unknownMessageKind(let kind):
            "unknown message kind \(kind)"
        case .unknownEventBody(let tag, let offset):
            "unknown event body tag \(tag) at offset \(offset)"
        case .unknownPeerState(let state, let offset):
            "unknown peer state \(state) at offset \(offset)"
        case .invalidBoolean(let value, let offset):
            "invalid boolean \(value) at offset \(offset) (only 0 or 1)"
        case .stringTooLong(let field, let length, let max, let offset):
            "\(field) too long: \(length) bytes at offset \(offset), at most \(max)"
        case .invalidUTF8(let field, let offset):
            "\(field) is not valid UTF-8 at offset \(offset)"
        case .controlCharacter(let field, let byte, let offset):
            "\(field) contains control character \(hex8(byte)) at offset \(offset)"
        case .countTooLarge(let field, let count, let max, let offset):
            "too many \(field): \(count) at offset \(offset), at most \(max)"
        case .countExceedsData(let field, let count, let minimumBytes, let remaining, let offset):
            "\(count) \(field) at offset \(offset) need at least \(minimumBytes) bytes, \(remaining) left"
        case .unsortedVersionVector(let offset):
            "version vector entries not strictly ascending by origin at offset \(offset)"
        case .zeroSequence(let field, let offset):
            "\(field) is 0 at offset \(offset) (sequence numbers start at 1)"
        case .trailingBytes(let count, let offset):
            "\(count) trailing \(count == 1 ? "byte" : "bytes") at offset \(offset) after a complete message"
        case .frameTooLarge(let length, let max):
            "frame of \(length) bytes exceeds the maximum of \(max)"
        case .lengthOutOfRange(let field, let length, let min, let max, let offset):
            "\(field) of \(length) bytes at offset \(offset) (allowed: \(min) to \(max))"
        case .sealedInsideSealed:
            "a sealed body cannot hold another sealed body"
        case .unknownPictureType(let type, let offset):
            "unknown picture type \(hex8(type)) at offset \(offset)"
        case .notRelayable(let kind, let offset):
            "a relay cannot carry a message of kind \(kind) (at offset \(offset)): only events, probes, acks and goodbyes"
        case .nonCanonicalSound(let offset):
            "sound frames not in their one encoding at offset \(offset) (a quiet frame's bits or unused flag bits set)"
        }
    }
}

private func hex8(_ value: UInt8) -> String {
    let digits = String(value, radix: 16, uppercase: false)
    return "0x" + String(repeating: "0", count: 2 - digits.count) + digits
}

private func hex16(_ value: UInt16) -> String {
    let digits = String(value, radix: 16, uppercase: false)
    return "0x" + String(repeating: "0", count: 4 - digits.count) + digits
}
