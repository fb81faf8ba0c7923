/// An MP4's header: how long the movie plays (`mvhd`) and the size its first video track is shown
/// at (`tkhd`, or the sample description). See ``ClipFile`` (+MP4) for the boxes' layout.
extension ClipFile {
    /// Duration from the first `moov`'s `mvhd`, size from its first video track.
    static func mp4Header(_ bytes: [UInt8]) throws(PictureFileError) -> ClipHeader {
        guard let moov = try first("moov", in: mp4Boxes(in: bytes, 0..<bytes.count)) else {
            throw .malformed("the MP4 has no movie box (moov)")
        }
        let children = try mp4Boxes(in: bytes, moov.payload)
        guard let mvhd = first("mvhd", in: children) else { throw .malformed("the MP4 has no movie header (mvhd)") }
        let width = try mp4FieldWidth(bytes, mvhd)
        let start = mvhd.payload.lowerBound + 4 + 2 * width
        guard start + 4 + width <= mvhd.payload.upperBound, let timescale = bytes.bigEndian32(at: start),
            let duration = mp4Unsigned(bytes, at: start + 4, width: width)
        else { throw .malformed("the MP4 movie header (mvhd) is too short") }
        guard timescale > 0 else { throw .malformed("the MP4 movie header gives a timescale of 0") }
        // A fragmented MP4 (written as it records) gives 0 and leaves the length to its fragments.
        guard duration != 0, duration != (width == 4 ? 0xFFFF_FFFF : UInt64.max) else {
            throw .malformed("the MP4 does not say how long it is (a fragmented MP4's movie header does not)")
        }
        for trak in children where trak.type == box("trak") {
            guard let size = try mp4VideoSize(bytes, trak: trak) else { continue }
            return ClipHeader(
                type: .mp4, milliseconds: milliseconds(duration, perSecond: UInt64(timescale)), width: size.width,
                height: size.height)
        }
        throw .malformed("the MP4 has no video track")
    }

    /// `count` ticks of `perSecond` (1 to 2^32 - 1, an MP4 timescale) in milliseconds, rounded to
    /// the nearest; `Int.max` when that does not fit (too long either way).
    static func milliseconds(_ count: UInt64, perSecond: UInt64) -> Int {
        let (whole, remainder) = count.quotientAndRemainder(dividingBy: perSecond)
        let fraction = Int((remainder * 1000 + perSecond / 2) / perSecond)  // remainder < 2^32: no overflow; <= 1000
        let (scaled, overflow) = whole.multipliedReportingOverflow(by: 1000)
        guard !overflow, let milliseconds = Int(exactly: scaled), milliseconds <= .max - fraction else { return .max }
        return milliseconds + fraction
    }

    /// The width and height `trak` is shown at if it is a video track (its media handler is
    /// "vide"), else nil: tkhd's, or the sample description's when tkhd's are 0; swapped when
    /// tkhd's matrix turns the picture a quarter (a = d = 0, b and c not), as a phone's portrait
    /// clips do. A matrix of zeros, which some writers leave, turns nothing.
    static func mp4VideoSize(_ bytes: [UInt8], trak: MP4Box) throws(PictureFileError) -> (width: Int, height: Int)? {
        let children = try mp4Boxes(in: bytes, trak.payload)
        guard let mdia = first("mdia", in: children) else { return nil }
        let media = try mp4Boxes(in: bytes, mdia.payload)
        guard let hdlr = first("hdlr", in: media), hdlr.payload.count >= 12,
            bytes.fourCC(at: hdlr.payload.lowerBound + 8) == box("vide")
        else { return nil }
        guard let tkhd = first("tkhd", in: children) else {
            throw .malformed("an MP4 video track has no track header (tkhd)")
        }
        // After version and flags: two times and a duration of the version's width, and 24 bytes
        // (track_ID, reserved, reserved, layer, alternate_group, volume, reserved).
        let matrix = tkhd.payload.lowerBound + 4 + 3 * (try mp4FieldWidth(bytes, tkhd)) + 24
        // The matrix is {a, b, u, c, d, v, x, y, w}, each 32 bits.
        guard matrix + 44 <= tkhd.payload.upperBound, let a = bytes.bigEndian32(at: matrix),
            let b = bytes.bigEndian32(at: matrix + 4), let c = bytes.bigEndian32(at: matrix + 12),
            let d = bytes.bigEndian32(at: matrix + 16), let width = bytes.bigEndian32(at: matrix + 36),
            let height = bytes.bigEndian32(at: matrix + 40)
        else { throw .malformed("an MP4 track header (tkhd) is too short") }
        var size = ((width + 0x8000) >> 16, (height + 0x8000) >> 16)
        if size.0 == 0 || size.1 == 0, let entry = try mp4SampleEntrySize(bytes, media: media) { size = entry }
        return a == 0 && d == 0 && b != 0 && c != 0 ? (size.1, size.0) : size
    }

    /// Width and height from the first sample description (`minf/stbl/stsd`) of a video track.
    static func mp4SampleEntrySize(_ bytes: [UInt8], media: [MP4Box]) throws(PictureFileError) -> (Int, Int)? {
        guard let minf = first("minf", in: media), let stbl = try first("stbl", in: mp4Boxes(in: bytes, minf.payload)),
            let stsd = try first("stsd", in: mp4Boxes(in: bytes, stbl.payload)), stsd.payload.count >= 8
        else { return nil }
        let entry = try mp4Box(in: bytes, at: stsd.payload.lowerBound + 8, end: stsd.payload.upperBound)
        let start = entry.payload.lowerBound
        guard entry.payload.count >= 28, let width = bytes.bigEndian16(at: start + 24),
            let height = bytes.bigEndian16(at: start + 26)
        else { return nil }
        return (width, height)
    }
}
