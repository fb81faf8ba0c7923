/// A bounds-checked big-endian reader over a slice of bytes.
///
/// Every read checks the bytes left first and throws ``WireError`` instead of trapping; list
/// counts are checked against their limit and against the bytes left before anything is
/// allocated. Offsets in errors count from the start of the slice.
///
/// ```swift
/// var reader = ByteReader([0x00, 0x02, 0x68, 0x69][...])
/// try reader.readString(.room, maxBytes: 64)   // "hi"
/// try reader.readUInt8()                       // throws .truncated(needed: 1, offset: 4, remaining: 0)
/// ```
struct ByteReader {
    private let bytes: ArraySlice<UInt8>
    /// Index into `bytes` (an index of the underlying array) of the next byte to read.
    private var index: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.index = bytes.startIndex
    }

    /// Reads from any collection of bytes, copying only when it is not already an array or slice.
    init(_ bytes: some Collection<UInt8>) {
        if let slice = bytes as? ArraySlice<UInt8> {
            self.init(slice)
        } else if let array = bytes as? [UInt8] {
            self.init(array[...])
        } else {
            self.init(ArraySlice(bytes))
        }
    }

    /// Offset of the next byte to read, from the start of the slice.
    var offset: Int { index - bytes.startIndex }

    /// Number of bytes not read yet.
    var remaining: Int { bytes.endIndex - index }

    var isAtEnd: Bool { index == bytes.endIndex }

    /// Throws ``WireError/truncated(needed:offset:remaining:)`` unless `count` bytes are left.
    func require(_ count: Int) throws(WireError) {
        guard count <= remaining else {
            throw .truncated(needed: count, offset: offset, remaining: remaining)
        }
    }

    /// Throws ``WireError/trailingBytes(count:offset:)`` unless every byte has been read.
    func expectEnd() throws(WireError) {
        guard isAtEnd else { throw .trailingBytes(count: remaining, offset: offset) }
    }

    mutating func readUInt8() throws(WireError) -> UInt8 {
        try require(1)
        defer { index += 1 }
        return bytes[index]
    }

    mutating func readUInt16() throws(WireError) -> UInt16 {
        try require(2)
        defer { index += 2 }
        return UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
    }

    mutating func readUInt32() throws(WireError) -> UInt32 {
        try require(4)
        var value: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            value = value << 8 | UInt32(byte)
        }
        index += 4
        return value
    }

    mutating func readUInt64() throws(WireError) -> UInt64 {
        try require(8)
        var value: UInt64 = 0
        for byte in bytes[index..<index + 8] {
            value = value << 8 | UInt64(byte)
        }
        index += 8
        return value
    }

    mutating func readInt64() throws(WireError) -> Int64 {
        Int64(bitPattern: try readUInt64())
    }

    /// Reads one byte that must be 0 (false) or 1 (true).
    mutating func readBool() throws(WireError) -> Bool {
        let at = offset
        switch try readUInt8() {
        case 0: return false
        case 1: return true
        case let other: throw .invalidBoolean(other, offset: at)
        }
    }

    /// The next `count` bytes, without copying them.
    mutating func readBytes(_ count: Int) throws(WireError) -> ArraySlice<UInt8> {
        try require(count)
        defer { index += count }
        return bytes[index..<index + count]
    }

    /// Reads a `UInt16` list count and checks it against `max` and against the bytes left
    /// (each element takes at least `minElementBytes`), so that reserving `count` is safe.
    mutating func readCount(_ field: WireError.Field, max: Int, minElementBytes: Int) throws(WireError) -> Int {
        let at = offset
        let count = Int(try readUInt16())
        guard count <= max else { throw .countTooLarge(field, count: count, max: max, offset: at) }
        guard count * minElementBytes <= remaining else {
            throw .countExceedsData(
                field, count: count, minimumBytes: count * minElementBytes, remaining: remaining, offset: at)
        }
        return count
    }

    /// Reads `UInt16` byte length + UTF-8. The length is checked against `maxBytes` before the
    /// bytes are read; the bytes must be well-formed UTF-8 without C0 controls or DEL.
    mutating func readString(_ field: WireError.Field, maxBytes: Int) throws(WireError) -> String {
        let at = offset
        let length = Int(try readUInt16())
        guard length <= maxBytes else {
            throw .stringTooLong(field, length: length, max: maxBytes, offset: at)
        }
        let start = offset
        let utf8 = try readBytes(length)
        switch WireText.check(utf8) {
        case .valid:
            return String(decoding: utf8, as: UTF8.self)
        case .invalidUTF8(let position):
            throw .invalidUTF8(field, offset: start + position)
        case .controlCharacter(let byte, let position):
            throw .controlCharacter(field, byte: byte, offset: start + position)
        }
    }

    mutating func readNodeID() throws(WireError) -> NodeID {
        let at = offset
        let raw = try readBytes(NodeID.byteCount)
        guard let id = NodeID(bytes: raw) else {
            // Unreachable: exactly `byteCount` bytes were read. Reported rather than trapping.
            throw .truncated(needed: NodeID.byteCount, offset: at, remaining: raw.count)
        }
        return id
    }
}
