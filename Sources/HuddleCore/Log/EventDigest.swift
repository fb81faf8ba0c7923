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

    private let w0: UInt64
    private let w1: UInt64
    private let w2: UInt64
    private let w3: UInt64

    /// No link: the event of an origin's first seq in a room, one made after a power cut (a void,
    /// whose predecessor is lost), or one made before links existed. Its signature checks alone.
    public static let none = EventDigest(words: (0, 0, 0, 0))

    private init(words: (UInt64, UInt64, UInt64, UInt64)) {
        (w0, w1, w2, w3) = words
    }

    /// A digest from exactly 32 bytes; `nil` for any other length.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == Self.byteCount else { return nil }
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        for (index, byte) in bytes.enumerated() {
            switch index / 8 {
            case 0: words.0 = words.0 << 8 | UInt64(byte)
            case 1: words.1 = words.1 << 8 | UInt64(byte)
            case 2: words.2 = words.2 << 8 | UInt64(byte)
            default: words.3 = words.3 << 8 | UInt64(byte)
            }
        }
        self.init(words: words)
    }

    /// The SHA-256 of `bytes`.
    public init(of bytes: [UInt8]) {
        self.init(bytes: Array(SHA256.hash(data: bytes)))!
    }

    /// The 32 bytes as four big-endian words.
    var words: (UInt64, UInt64, UInt64, UInt64) { (w0, w1, w2, w3) }

    /// Whether this is ``none``.
    public var isNone: Bool { self == .none }

    /// The 32 bytes, in the order they were given.
    public var bytes: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(Self.byteCount)
        for word in [w0, w1, w2, w3] {
            for shift in stride(from: 56, through: 0, by: -8) {
                out.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        return out
    }

    /// The first 12 hex digits.
    public var description: String { String(bytes.hexString.prefix(12)) }
}

extension Event {
    /// The SHA-256 of this event's wire encoding: what the origin's next event names as its
    /// ``previous``.
    public var digest: EventDigest { EventDigest(of: encoded()) }
}
