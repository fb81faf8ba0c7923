/// Bounds-checked reads of the integers picture files are made of.
///
/// Every offset and length in a picture file comes from whoever sent it, so each read returns
/// `nil` instead of trapping when its bytes are not all there (or the offset is negative), and
/// the 32-bit ones return `nil` rather than trap where `Int` is 32 bits and the value does not
/// fit. Callers turn `nil` into ``PictureFileError/malformed(_:)`` with a word on what ran out.
extension [UInt8] {
    /// Whether `count` bytes start at `offset` (false for a negative offset or count).
    func hasBytes(_ count: Int, at offset: Int) -> Bool {
        offset >= 0 && count >= 0 && offset <= self.count && self.count - offset >= count
    }

    /// Whether `expected` is exactly the bytes at `offset`.
    func hasBytes(_ expected: [UInt8], at offset: Int) -> Bool {
        hasBytes(expected.count, at: offset) && self[offset..<offset + expected.count].elementsEqual(expected)
    }

    func bigEndian16(at offset: Int) -> Int? {
        guard hasBytes(2, at: offset) else { return nil }
        return Int(self[offset]) << 8 | Int(self[offset + 1])
    }

    func bigEndian32(at offset: Int) -> Int? {
        guard let high = bigEndian16(at: offset), let low = bigEndian16(at: offset + 2) else { return nil }
        return Int(exactly: UInt32(high) << 16 | UInt32(low))
    }

    /// As a `UInt64`, since the 64-bit sizes, times and durations of MP4 boxes may not fit an `Int`.
    func bigEndian64(at offset: Int) -> UInt64? {
        guard let high = bigEndian32(at: offset), let low = bigEndian32(at: offset + 4) else { return nil }
        return UInt64(high) << 32 | UInt64(low)
    }

    func littleEndian16(at offset: Int) -> Int? {
        guard hasBytes(2, at: offset) else { return nil }
        return Int(self[offset]) | Int(self[offset + 1]) << 8
    }

    func littleEndian24(at offset: Int) -> Int? {
        guard let low = littleEndian16(at: offset), hasBytes(3, at: offset) else { return nil }
        return low | Int(self[offset + 2]) << 16
    }

    func littleEndian32(at offset: Int) -> Int? {
        guard let low = littleEndian16(at: offset), let high = littleEndian16(at: offset + 2) else { return nil }
        return Int(exactly: UInt32(high) << 16 | UInt32(low))
    }

    /// The four bytes at `offset` as one number, first byte highest: how PNG and RIFF chunk
    /// types are compared (``PictureFile/fourCC(_:)``), whatever the container's byte order.
    func fourCC(at offset: Int) -> UInt32? {
        guard hasBytes(4, at: offset) else { return nil }
        return self[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }
}

extension PictureFile {
    /// A chunk type written as text ("IHDR", "VP8X"), as ``Swift/Array/fourCC(at:)`` reads it.
    static func fourCC(_ text: StaticString) -> UInt32 {
        text.withUTF8Buffer { $0.reduce(0) { $0 << 8 | UInt32($1) } }
    }
}
