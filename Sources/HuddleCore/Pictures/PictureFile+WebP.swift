/// WebP: a RIFF container of chunks.
///
///     "RIFF"  size:u32le  "WEBP"                   size counts from "WEBP" to the end
///     fourCC:4  size:u32le  data[size]  (pad)      a chunk, one pad byte when size is odd
///     VP8X data:  flags:u8  reserved:3  (width - 1):u24le  (height - 1):u24le
///                 flags: 0x20 ICC, 0x10 alpha, 0x08 Exif, 0x04 XMP, 0x02 animation
///     "VP8 " data: frame tag:3  9D 01 2A  width:u16le (14 bits)  height:u16le (14 bits)  …
///     "VP8L" data: 2F  (width - 1):14 bits  (height - 1):14 bits  … (little-endian bit fields)
///
/// A simple file holds one "VP8 " or "VP8L" chunk; an extended one starts with VP8X and may add
/// ICCP, ANIM, ANMF, ALPH, and the metadata chunks "EXIF" and "XMP ".
extension PictureFile {
    /// One chunk and the bytes it covers, checked to lie within the RIFF.
    struct WebPChunk {
        var fourCC: UInt32
        /// From the FourCC to the pad byte, inclusive.
        var whole: Range<Int>
        var data: Range<Int>
    }

    /// Where the RIFF container ends, checked to be within `bytes`. What follows it is not part
    /// of the picture.
    static func webpEnd(_ bytes: [UInt8]) throws(PictureFileError) -> Int {
        guard let size = bytes.littleEndian32(at: 4), size >= 4, bytes.hasBytes(size, at: 8) else {
            throw .malformed("the WebP file is shorter than its RIFF header says")
        }
        return 8 + size
    }

    /// The chunk at `offset`, which with its pad byte must end by `end` (the RIFF's end).
    static func webpChunk(in bytes: [UInt8], at offset: Int, end: Int) throws(PictureFileError) -> WebPChunk {
        guard offset >= 0, offset <= end, end <= bytes.count, let fourCC = bytes.fourCC(at: offset),
            let size = bytes.littleEndian32(at: offset + 4), end - offset - 8 >= size
        else { throw .malformed("a WebP chunk runs past the end of the file, at byte \(offset)") }
        let dataEnd = offset + 8 + size
        let padded = size % 2 == 1 ? dataEnd + 1 : dataEnd
        guard padded <= end else { throw .malformed("a WebP chunk is missing its pad byte, at byte \(offset)") }
        return WebPChunk(fourCC: fourCC, whole: offset..<padded, data: offset + 8..<dataEnd)
    }

    static let vp8 = fourCC("VP8 ")
    static let vp8l = fourCC("VP8L")
    static let vp8x = fourCC("VP8X")

    /// The chunks stripping keeps: the picture (VP8, VP8L, its alpha ALPH), the extended header
    /// (VP8X), the colour profile (ICCP) and an animation (ANIM, ANMF). "EXIF", "XMP " and every
    /// chunk not listed go.
    static let keptWebPChunks: Set<UInt32> = {
        let names: [StaticString] = ["VP8 ", "VP8L", "VP8X", "ALPH", "ANIM", "ANMF", "ICCP"]
        return Set(names.map(fourCC))
    }()

    /// Width and height from the first chunk: the canvas of VP8X, or the frame of a simple file's
    /// VP8 or VP8L.
    static func webpSize(_ bytes: [UInt8]) throws(PictureFileError) -> (width: Int, height: Int) {
        let chunk = try webpChunk(in: bytes, at: 12, end: webpEnd(bytes))
        let start = chunk.data.lowerBound
        switch chunk.fourCC {
        case vp8x:
            guard chunk.data.count >= 10, let width = bytes.littleEndian24(at: start + 4),
                let height = bytes.littleEndian24(at: start + 7)
            else { throw .malformed("the WebP VP8X chunk is too short") }
            return (width + 1, height + 1)
        case vp8:
            guard chunk.data.count >= 10, bytes.hasBytes([0x9D, 0x01, 0x2A], at: start + 3),
                let width = bytes.littleEndian16(at: start + 6), let height = bytes.littleEndian16(at: start + 8)
            else { throw .malformed("the WebP VP8 frame header is too short or lacks its start code") }
            return (width & 0x3FFF, height & 0x3FFF)
        case vp8l:
            guard chunk.data.count >= 5, bytes[start] == 0x2F, let bits = bytes.littleEndian32(at: start + 1) else {
                throw .malformed("the WebP VP8L header is too short or lacks its signature")
            }
            return ((bits & 0x3FFF) + 1, (bits >> 14 & 0x3FFF) + 1)
        default:
            throw .malformed("the WebP does not start with a VP8, VP8L or VP8X chunk")
        }
    }

    /// The WebP with only ``keptWebPChunks``, each as it is but VP8X, whose flags for Exif and
    /// XMP are cleared (a decoder that finds a flag without its chunk may refuse the file), and
    /// the RIFF size rewritten.
    static func strippedWebP(_ bytes: [UInt8]) throws(PictureFileError) -> [UInt8] {
        let end = try webpEnd(bytes)
        var chunks: [UInt8] = webpMagic
        chunks.reserveCapacity(end)
        var offset = 12
        while offset < end {
            let chunk = try webpChunk(in: bytes, at: offset, end: end)
            offset = chunk.whole.upperBound
            guard keptWebPChunks.contains(chunk.fourCC) else { continue }
            if chunk.fourCC == vp8x, !chunk.data.isEmpty {
                var copy = Array(bytes[chunk.whole])
                copy[8] &= ~(0x08 | 0x04)  // flags: Exif, XMP
                chunks += copy
            } else {
                chunks += bytes[chunk.whole]
            }
        }
        // No larger than the RIFF size read from 32 bits, so it fits in 32 bits.
        guard let size = UInt32(exactly: chunks.count) else { throw .malformed("the WebP is too large") }
        return riffMagic + (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) } + chunks
    }
}
