/// 32 bytes held inline as four big-endian words: a node id, an event's digest. Cheap to hash
/// and compare, and no array to allocate.
struct Bytes32: Hashable, Comparable, Sendable {
    var w0: UInt64
    var w1: UInt64
    var w2: UInt64
    var w3: UInt64

    static let zero = Bytes32(w0: 0, w1: 0, w2: 0, w3: 0)

    init(w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64) {
        (self.w0, self.w1, self.w2, self.w3) = (w0, w1, w2, w3)
    }

    /// Exactly 32 bytes, in order; `nil` for any other length.
    init?(_ bytes: some Collection<UInt8>) {
        guard bytes.count == 32 else { return nil }
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        for (index, byte) in bytes.enumerated() {
            switch index / 8 {
            case 0: words.0 = words.0 << 8 | UInt64(byte)
            case 1: words.1 = words.1 << 8 | UInt64(byte)
            case 2: words.2 = words.2 << 8 | UInt64(byte)
            default: words.3 = words.3 << 8 | UInt64(byte)
            }
        }
        (w0, w1, w2, w3) = words
    }

    /// The 32 bytes, in the order they were given.
    var bytes: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(32)
        for word in [w0, w1, w2, w3] {
            for shift in stride(from: 56, through: 0, by: -8) {
                out.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        return out
    }

    static func < (lhs: Bytes32, rhs: Bytes32) -> Bool {
        (lhs.w0, lhs.w1, lhs.w2, lhs.w3) < (rhs.w0, rhs.w1, rhs.w2, rhs.w3)
    }
}
