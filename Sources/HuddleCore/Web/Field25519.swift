/// An element of GF(2^255 − 19), the field of Curve25519, for the one thing X25519's library does
/// not do: Elligator 2, which CPace maps a pairing code to a point with (``CPace``). Eight 32-bit
/// limbs, little endian, always reduced below p. Plain and short rather than fast or constant
/// time: it runs once per pairing, on a hash that already depends on a fresh session id.
///
/// ```swift
/// let u = Field25519(littleEndian: bytes)          // the top bit ignored, as RFC 7748 decodes
/// let x = (u * u + Field25519(1)).inverse           // (u² + 1)⁻¹
/// x.littleEndianBytes                               // 32 bytes
/// ```
struct Field25519: Equatable, Sendable {
    /// p = 2^255 − 19, little endian.
    static let p: [UInt32] = [0xFFFF_FFED, .max, .max, .max, .max, .max, .max, 0x7FFF_FFFF]

    private(set) var limbs: [UInt32]

    init(_ small: UInt32) {
        limbs = [small, 0, 0, 0, 0, 0, 0, 0]
    }

    /// 32 bytes little endian, bit 255 cleared (RFC 7748's decodeUCoordinate), reduced mod p.
    init(littleEndian bytes: [UInt8]) {
        precondition(bytes.count == 32, "a field element is 32 bytes")
        var limbs = [UInt32](repeating: 0, count: 8)
        for index in 0..<32 {
            limbs[index / 4] |= UInt32(bytes[index]) << UInt32(8 * (index % 4))
        }
        limbs[7] &= 0x7FFF_FFFF
        self.limbs = Self.reduced(limbs)
    }

    private init(limbs: [UInt32]) {
        self.limbs = limbs
    }

    /// The element as 32 bytes little endian (RFC 7748's encodeUCoordinate).
    var littleEndianBytes: [UInt8] {
        limbs.flatMap { limb in (0..<4).map { UInt8(truncatingIfNeeded: limb >> (8 * $0)) } }
    }

    static func + (a: Field25519, b: Field25519) -> Field25519 {
        var sum = [UInt32](repeating: 0, count: 8)
        var carry: UInt64 = 0
        for index in 0..<8 {
            let total = UInt64(a.limbs[index]) + UInt64(b.limbs[index]) + carry
            sum[index] = UInt32(truncatingIfNeeded: total)
            carry = total >> 32
        }
        // Below 2p < 2^256: no carry out of the top limb.
        return Field25519(limbs: reduced(sum))
    }

    static prefix func - (a: Field25519) -> Field25519 {
        a == Field25519(0) ? a : Field25519(limbs: subtract(p, a.limbs))
    }

    static func - (a: Field25519, b: Field25519) -> Field25519 { a + (-b) }

    static func * (a: Field25519, b: Field25519) -> Field25519 {
        var wide = [UInt32](repeating: 0, count: 16)
        for i in 0..<8 {
            var carry: UInt64 = 0
            for j in 0..<8 {
                let total = UInt64(a.limbs[i]) * UInt64(b.limbs[j]) + UInt64(wide[i + j]) + carry
                wide[i + j] = UInt32(truncatingIfNeeded: total)
                carry = total >> 32
            }
            wide[i + 8] = UInt32(truncatingIfNeeded: carry)
        }
        // 2^256 ≡ 38 (mod p): fold the high half onto the low, twice.
        var folded = [UInt32](repeating: 0, count: 9)
        var carry: UInt64 = 0
        for index in 0..<8 {
            let total = UInt64(wide[index]) + 38 * UInt64(wide[index + 8]) + carry
            folded[index] = UInt32(truncatingIfNeeded: total)
            carry = total >> 32
        }
        folded[8] = UInt32(carry)
        var limbs = Array(folded[0..<8])
        carry = 38 * UInt64(folded[8])
        for index in 0..<8 where carry > 0 {
            let total = UInt64(limbs[index]) + carry
            limbs[index] = UInt32(truncatingIfNeeded: total)
            carry = total >> 32
        }
        if carry > 0 {  // wrapped past 2^256 once more: 38 again, now small
            limbs[0] &+= UInt32(38 * carry)
        }
        return Field25519(limbs: reduced(limbs))
    }

    /// self^exponent (exponent little endian, 32 bytes), by squaring and multiplying.
    func power(_ exponent: [UInt32]) -> Field25519 {
        var result = Field25519(1)
        for bit in stride(from: 255, through: 0, by: -1) {
            result = result * result
            if (exponent[bit / 32] >> (bit % 32)) & 1 == 1 { result = result * self }
        }
        return result
    }

    /// self^(p − 2) = 1 / self (0 for 0).
    var inverse: Field25519 { power(Self.subtract(Self.p, [2, 0, 0, 0, 0, 0, 0, 0])) }

    /// Euler's criterion, self^((p − 1) / 2): 1 for a non-zero square, p − 1 for a non-square, 0 for 0.
    var legendre: Field25519 {
        var exponent = Self.subtract(Self.p, [1, 0, 0, 0, 0, 0, 0, 0])
        for index in 0..<8 {  // halve: shift right by one across the limbs
            exponent[index] = exponent[index] >> 1 | (index < 7 ? exponent[index + 1] << 31 : 0)
        }
        return power(exponent)
    }

    /// `limbs` (below 2^256) reduced below p.
    private static func reduced(_ limbs: [UInt32]) -> [UInt32] {
        var value = limbs
        while !isLess(value, p) { value = subtract(value, p) }
        return value
    }

    private static func isLess(_ a: [UInt32], _ b: [UInt32]) -> Bool {
        for index in stride(from: 7, through: 0, by: -1) where a[index] != b[index] {
            return a[index] < b[index]
        }
        return false
    }

    /// a − b for a ≥ b.
    private static func subtract(_ a: [UInt32], _ b: [UInt32]) -> [UInt32] {
        var difference = [UInt32](repeating: 0, count: 8)
        var borrow: Int64 = 0
        for index in 0..<8 {
            var total = Int64(a[index]) - Int64(b[index]) - borrow
            borrow = total < 0 ? 1 : 0
            if total < 0 { total += 1 << 32 }
            difference[index] = UInt32(total)
        }
        return difference
    }
}
