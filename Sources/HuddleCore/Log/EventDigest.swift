import Crypto

/// The SHA-256 of an event's wire encoding (``Event/encoded()``, its signature included): what
/// the origin's next event in the room names as its ``Event/previous``.
///
/// The link lets a batch of one origin's events cost one signature check, not one each: once
/// an event's signature checks, the event before it is the one whose digest it names, and so on
/// down the run (``LinkedCheck``). A collision in SHA-256 would be needed to slip another event in.
public struct EventDigest: Hashable, Sendable, CustomStringConvertible {
    /// Number of bytes of a digest on the wire.
    public static let byteCount = 32

    /// The digest's bytes, inline.
    let raw: Bytes32

    /// No link: the event of an origin's first seq in a room, one made after a power cut (a void,
    /// whose predecessor is lost), or one made before links existed. Its signature checks alone.
    public static let none = EventDigest(raw: .zero)

    private init(raw: Bytes32) {
        self.raw = raw
    }

    /// A digest from exactly 32 bytes; `nil` for any other length.
    public init?(bytes: some Collection<UInt8>) {
        guard let raw = Bytes32(bytes) else { return nil }
        self.raw = raw
    }

    /// The SHA-256 of `bytes`.
    public init(of bytes: [UInt8]) {
        self.init(bytes: Array(SHA256.hash(data: bytes)))!
    }

    /// Whether this is ``none``.
    public var isNone: Bool { self == .none }

    /// The 32 bytes, in the order they were given.
    public var bytes: [UInt8] { raw.bytes }

    /// The first 12 hex digits.
    public var description: String { String(bytes.hexString.prefix(12)) }
}

extension Event {
    /// The SHA-256 of this event's wire encoding: what the origin's next event names as its
    /// ``previous``.
    public var digest: EventDigest { EventDigest(of: encoded()) }
}
