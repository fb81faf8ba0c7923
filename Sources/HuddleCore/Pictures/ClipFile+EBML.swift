/// EBML, the binary format WebM (and Matroska) files are made of: elements, some of them lists of
/// elements.
///
///     id:vint  size:vint  data[size]
///
/// A vint's length is one more than the count of leading 0 bits in its first byte: 1xxxxxxx is
/// one byte, 01xxxxxx xxxxxxxx two, up to 8 for a size and 4 for an ID. An ID keeps that marker
/// bit (Segment is 18 53 80 67); a size drops it (82 is 2, 40 02 is 2 too). A size of all 1 bits
/// (FF, 7F FF, …) is "unknown": the element runs until its parent ends, which a live recorder
/// writes for the Segment and its Clusters because it does not know their size yet.
///
///     EC  size  zeros                                  Void: padding, skipped by every reader
extension ClipFile {
    /// One element and the bytes it covers, checked to lie within its parent.
    struct EBMLElement {
        /// With its marker bits, as written ("Info" is 0x1549A966).
        var id: UInt32
        /// From the ID to the data's last byte.
        var whole: Range<Int>
        var data: Range<Int>
        /// Whether the size was "unknown" (all 1 bits): the element then runs to its parent's end.
        var sizeIsUnknown: Bool
    }

    /// The element at `offset`, which must end by `end`: its parent's end, or the file's.
    static func ebmlElement(in bytes: [UInt8], at offset: Int, end: Int) throws(PictureFileError) -> EBMLElement {
        guard offset >= 0, offset < end, end <= bytes.count else {
            throw .malformed("a WebM element runs past the end of its parent, at byte \(offset)")
        }
        let idLength = bytes[offset].leadingZeroBitCount + 1
        let sizeOffset = offset + idLength
        guard idLength <= 4, end - offset > idLength else {
            throw .malformed("a WebM element's ID is invalid or runs past the end, at byte \(offset)")
        }
        let sizeLength = bytes[sizeOffset].leadingZeroBitCount + 1
        let dataStart = sizeOffset + sizeLength
        guard sizeLength <= 8, dataStart <= end else {
            throw .malformed("a WebM element's size is invalid or runs past the end, at byte \(offset)")
        }
        let id = bytes[offset..<sizeOffset].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        var size = UInt64(bytes[sizeOffset] & (0xFF >> sizeLength))
        for index in sizeOffset + 1..<dataStart { size = size << 8 | UInt64(bytes[index]) }
        if size == (1 << (7 * sizeLength)) - 1 {
            return EBMLElement(id: id, whole: offset..<end, data: dataStart..<end, sizeIsUnknown: true)
        }
        guard let length = Int(exactly: size), length <= end - dataStart else {
            throw .malformed("a WebM element runs past the end of its parent, at byte \(offset)")
        }
        let dataEnd = dataStart + length
        return EBMLElement(id: id, whole: offset..<dataEnd, data: dataStart..<dataEnd, sizeIsUnknown: false)
    }

    /// Every element in `range`, which they must fill exactly, each of a known size.
    static func ebmlChildren(in bytes: [UInt8], _ range: Range<Int>) throws(PictureFileError) -> [EBMLElement] {
        var children: [EBMLElement] = []
        var offset = range.lowerBound
        while offset < range.upperBound {
            let child = try ebmlElement(in: bytes, at: offset, end: range.upperBound)
            guard !child.sizeIsUnknown else {
                throw .malformed("a WebM element that may not have an unknown size has one, at byte \(offset)")
            }
            children.append(child)
            offset = child.whole.upperBound
        }
        return children
    }

    /// An unsigned integer element's value: 0 to 8 bytes, big-endian (none is 0).
    static func ebmlUnsigned(_ bytes: [UInt8], _ element: EBMLElement) throws(PictureFileError) -> UInt64 {
        guard element.data.count <= 8 else {
            throw .malformed("a WebM number is longer than 8 bytes, at byte \(element.whole.lowerBound)")
        }
        return bytes[element.data].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// A float element's value: 0 bytes (0), or an IEEE 754 float of 4 or 8 bytes, big-endian.
    static func ebmlFloat(_ bytes: [UInt8], _ element: EBMLElement) throws(PictureFileError) -> Double {
        let bits = bytes[element.data].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        switch element.data.count {
        case 0: return 0
        case 4: return Double(Float(bitPattern: UInt32(truncatingIfNeeded: bits)))
        case 8: return Double(bitPattern: bits)
        default: throw .malformed("a WebM float is not 4 or 8 bytes long, at byte \(element.whole.lowerBound)")
        }
    }

    static let voidID: UInt8 = 0xEC

    /// Overwrites `range`, a whole element, with a Void element of exactly its length: the ID EC,
    /// a size field, and zeros.
    ///
    /// The size field is the narrowest that fits what is left, so the length comes out exact: a
    /// 2-byte element becomes EC 80 (a size of 0), a 129-byte one EC 40 7E and 126 zeros (one
    /// byte of size would leave 127, all 1 bits, which means "unknown").
    static func writeVoid(_ output: inout [UInt8], over range: Range<Int>) {
        // Every element has at least an ID and a size, so at least 2 bytes.
        guard range.count >= 2 else { return }
        let rest = UInt64(range.count - 1)
        var width: UInt64 = 1
        while width < 8, rest - width > (1 << (7 * width)) - 2 { width += 1 }
        let sizeField = (rest - width) | 1 << (7 * width)
        output[range.lowerBound] = voidID
        for index in 0..<width {
            let shift = 8 * (width - 1 - index)
            output[range.lowerBound + 1 + Int(index)] = UInt8(truncatingIfNeeded: sizeField >> shift)
        }
        let zeros = range.lowerBound + 1 + Int(width)..<range.upperBound
        output.replaceSubrange(zeros, with: repeatElement(0, count: zeros.count))
    }
}
