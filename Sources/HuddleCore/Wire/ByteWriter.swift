/// Appends big-endian integers, length-prefixed strings and counts to a byte array.
///
/// Writing never fails and never traps. A string or list longer than its 16-bit length prefix can
/// say is written with the prefix 0xFFFF (and only that many bytes or elements): larger than
/// every field's limit, so every decoder rejects it. Callers check limits before encoding.
///
/// ```swift
/// var writer = ByteWriter()
/// writer.write(UInt16(0x4844))
/// writer.write(string: "kickoff")
/// writer.bytes   // [0x48, 0x44, 0x00, 0x07, 0x6b, 0x69, 0x63, 0x6b, 0x6f, 0x66, 0x66]
/// ```
struct ByteWriter {
    /// Everything written so far.
    private(set) var bytes: [UInt8]

    init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Number of bytes written so far.
    var count: Int { bytes.count }

    mutating func write(_ value: UInt8) {
        bytes.append(value)
    }

    mutating func write(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    mutating func write(_ value: UInt32) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func write(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func write(_ value: Int64) {
        write(UInt64(bitPattern: value))
    }

    mutating func write(_ value: Bool) {
        bytes.append(value ? 1 : 0)
    }

    /// 32 bytes held as words (a node id, an event's digest), with no array between.
    mutating func write(_ value: Bytes32) {
        write(value.w0)
        write(value.w1)
        write(value.w2)
        write(value.w3)
    }

    mutating func write(bytes other: some Sequence<UInt8>) {
        bytes.append(contentsOf: other)
    }

    /// Writes a list count as a `UInt16`, clamped to 0xFFFF. Returns how many elements to write.
    @discardableResult
    mutating func write(count: Int) -> Int {
        let clamped = min(max(count, 0), Int(UInt16.max))
        write(UInt16(clamped))
        return clamped
    }

    /// Writes `UInt16` byte length + UTF-8 bytes (at most 0xFFFF of them; see the type's doc).
    mutating func write(string: String) {
        var string = string
        string.withUTF8 { utf8 in
            let length = write(count: utf8.count)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8.prefix(length)))
        }
    }

    /// Overwrites 4 bytes at `offset` (which must have been written) with a big-endian `UInt32`.
    mutating func patch(_ value: UInt32, at offset: Int) {
        for index in 0..<4 {
            bytes[offset + index] = UInt8(truncatingIfNeeded: value >> UInt32(24 - 8 * index))
        }
    }
}
