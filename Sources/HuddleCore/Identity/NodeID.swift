/// The identity of a node: its 32-byte Ed25519 public key.
///
/// A node id *is* the key that verifies the node's events, so an event can only claim an origin
/// whose private key signed it; nothing has to be looked up. It is stored inline (four words) so
/// ids are cheap to hash and compare in version vectors and logs.
///
/// ```swift
/// let id = NodeIdentity.generate().id
/// print(id)          // "3f9a0c1e22b4" — a short prefix for people
/// print(id.hex)      // all 64 hex digits, for status output and files
/// ```
public struct NodeID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Number of bytes in a node id (an Ed25519 public key).
    public static let byteCount = 32

    /// The key's bytes, inline.
    let raw: Bytes32

    /// Makes an id from exactly 32 bytes; `nil` for any other length.
    public init?(bytes: some Collection<UInt8>) {
        guard let raw = Bytes32(bytes) else { return nil }
        self.raw = raw
    }

    /// Parses the 64-digit hex form printed by ``hex``.
    public init?(hex: some StringProtocol) {
        guard hex.utf8.count == Self.byteCount * 2, let bytes = [UInt8](hexDigits: hex) else { return nil }
        self.init(bytes: bytes)
    }

    /// The 32 key bytes, in the order they were given.
    public var bytes: [UInt8] { raw.bytes }

    /// All 64 lowercase hex digits.
    public var hex: String { bytes.hexString }

    /// The first 12 hex digits: enough to tell the nodes of a home network apart.
    public var description: String { String(hex.prefix(12)) }

    public static func < (lhs: NodeID, rhs: NodeID) -> Bool { lhs.raw < rhs.raw }
}

extension Sequence<UInt8> {
    /// Lowercase hex digits, two per byte.
    public var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var utf8 = [UInt8]()
        for byte in self {
            utf8.append(digits[Int(byte >> 4)])
            utf8.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: utf8, as: UTF8.self)
    }
}

extension [UInt8] {
    /// Parses an even number of hex digits (either case); `nil` on anything else.
    init?(hexDigits: some StringProtocol) {
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        let utf8 = Array(hexDigits.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = value(utf8[index]), let low = value(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        self = out
    }
}
