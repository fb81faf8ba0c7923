/// PNG: an eight-byte signature, then chunks up to IEND.
///
///     89 50 4E 47 0D 0A 1A 0A                      signature
///     length:u32  type:4  data[length]  crc:u32    a chunk (big-endian; IHDR first, IEND last)
///     IHDR data:  width:u32  height:u32  depth:u8  colour:u8  compression:u8  filter:u8  interlace:u8
extension PictureFile {
    /// One chunk and the bytes it covers, checked to lie within the file.
    struct PNGChunk {
        var type: UInt32
        /// From the length to the CRC, inclusive.
        var whole: Range<Int>
        var data: Range<Int>
    }

    /// The chunk at `offset`. Its CRC is not checked: stripping copies it as it is, and the
    /// decoder that shows the picture checks it.
    static func pngChunk(in bytes: [UInt8], at offset: Int) throws(PictureFileError) -> PNGChunk {
        // PNG caps a chunk's length at 2^31 - 1.
        guard let length = bytes.bigEndian32(at: offset), length <= 0x7FFF_FFFF, let type = bytes.fourCC(at: offset + 4),
            bytes.hasBytes(length, at: offset + 8), bytes.hasBytes(4, at: offset + 8 + length)
        else { throw .malformed("a PNG chunk runs past the end of the file, at byte \(offset)") }
        return PNGChunk(type: type, whole: offset..<offset + 12 + length, data: offset + 8..<offset + 8 + length)
    }

    static let ihdr = fourCC("IHDR")
    static let iend = fourCC("IEND")

    /// The first chunk, which must be IHDR.
    static func pngHeaderChunk(_ bytes: [UInt8]) throws(PictureFileError) -> PNGChunk {
        let chunk = try pngChunk(in: bytes, at: pngSignature.count)
        guard chunk.type == ihdr else { throw .malformed("the PNG does not start with its header chunk") }
        guard chunk.data.count == 13 else { throw .malformed("the PNG header chunk is not 13 bytes long") }
        return chunk
    }

    /// Width and height from IHDR.
    static func pngSize(_ bytes: [UInt8]) throws(PictureFileError) -> (width: Int, height: Int) {
        let start = try pngHeaderChunk(bytes).data.lowerBound
        // PNG caps both at 2^31 - 1; larger ones are not PNG, rather than too many pixels.
        guard let width = bytes.bigEndian32(at: start), let height = bytes.bigEndian32(at: start + 4),
            width <= 0x7FFF_FFFF, height <= 0x7FFF_FFFF
        else { throw .malformed("the PNG header gives a width or height over 2^31 - 1") }
        return (width, height)
    }

    /// The chunks stripping keeps: the picture itself (IHDR, PLTE, IDAT, IEND), what says how to
    /// show its colours and transparency (tRNS, gAMA, cHRM, sRGB, iCCP, sBIT, bKGD), its pixel
    /// size (pHYs), and an animated PNG's frames (acTL, fcTL, fdAT). Text (tEXt, zTXt, iTXt, where
    /// XMP lives), Exif (eXIf), the time (tIME) and every chunk not listed go.
    static let keptPNGChunks: Set<UInt32> = {
        let names: [StaticString] = [
            "IHDR", "PLTE", "IDAT", "IEND", "tRNS", "gAMA", "cHRM", "sRGB", "iCCP", "sBIT", "bKGD", "pHYs",
            "acTL", "fcTL", "fdAT",
        ]
        return Set(names.map(fourCC))
    }()

    /// The PNG with only ``keptPNGChunks``, each byte for byte, up to and including IEND.
    static func strippedPNG(_ bytes: [UInt8]) throws(PictureFileError) -> [UInt8] {
        var output = pngSignature
        output.reserveCapacity(bytes.count)
        var offset = try pngHeaderChunk(bytes).whole.lowerBound
        while true {
            let chunk = try pngChunk(in: bytes, at: offset)
            if keptPNGChunks.contains(chunk.type) { output += bytes[chunk.whole] }
            if chunk.type == iend { return output }
            offset = chunk.whole.upperBound
        }
    }
}
