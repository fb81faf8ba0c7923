/// MP4: the ISO base media file format, and QuickTime's, which it grew from (an iPhone's .mov
/// reads the same): a file of boxes, some of them boxes of boxes.
///
///     size:u32  type:4  payload                    size counts the whole box, header included
///     1:u32  type:4  largesize:u64  payload        a box too large for a 32-bit size
///     0:u32  type:4  payload                       a box that runs to the end of the file
///     size:u32  "uuid"  usertype:16  payload       a box named by a UUID (XMP, vendors' own)
///
///     ftyp  mdat  moov { mvhd  trak { tkhd  mdia { mdhd  hdlr  minf { stbl { stsd  stco … } } } }  udta }
///
/// mvhd, tkhd and mdhd start with version:u8 flags:u24, then creation_time and modification_time
/// (seconds since 1904), 32 bits each in version 0 and 64 in version 1; then
///
///     mvhd  timescale:u32  duration:u32|u64  …
///     tkhd  track_ID:u32  reserved:4  duration:u32|u64  reserved:8  layer:2  group:2  volume:2
///           reserved:2  matrix:9×i32  width:u32  height:u32        (width, height: 16.16 fixed point)
///     hdlr  version+flags:4  pre_defined:4  handler_type:4  …       ("vide" for video)
///     stsd  version+flags:4  entry_count:u32  entries (boxes); a visual entry's payload is
///           reserved:6  data_reference_index:u16  pre_defined:2  reserved:2  pre_defined:12
///           width:u16  height:u16  …
extension ClipFile {
    /// One box and the bytes it covers, checked to lie within its parent.
    struct MP4Box {
        var type: UInt32
        /// From the size to the payload's last byte.
        var whole: Range<Int>
        /// After the size, the type and any largesize (a `uuid` box's usertype is in it).
        var payload: Range<Int>
    }

    /// The box at `offset`, which must end by `end`: its parent's end, or the file's.
    static func mp4Box(in bytes: [UInt8], at offset: Int, end: Int) throws(PictureFileError) -> MP4Box {
        guard offset >= 0, offset <= end, end <= bytes.count, end - offset >= 8,
            let size32 = bytes.bigEndian32(at: offset), let type = bytes.fourCC(at: offset + 4)
        else { throw .malformed("an MP4 box's header runs past the end of its parent, at byte \(offset)") }
        var size = size32
        var headerSize = 8
        if size32 == 0 {
            size = end - offset
        } else if size32 == 1 {
            guard end - offset >= 16, let large = bytes.bigEndian64(at: offset + 8) else {
                throw .malformed("an MP4 box's 64-bit size runs past the end of its parent, at byte \(offset)")
            }
            size = Int(exactly: large) ?? .max
            headerSize = 16
        }
        guard size >= headerSize, size <= end - offset else {
            throw .malformed("an MP4 box runs past the end of its parent, at byte \(offset)")
        }
        return MP4Box(type: type, whole: offset..<offset + size, payload: offset + headerSize..<offset + size)
    }

    /// Every box in `range`, which they must fill exactly.
    static func mp4Boxes(in bytes: [UInt8], _ range: Range<Int>) throws(PictureFileError) -> [MP4Box] {
        var boxes: [MP4Box] = []
        var offset = range.lowerBound
        while offset < range.upperBound {
            let box = try mp4Box(in: bytes, at: offset, end: range.upperBound)
            boxes.append(box)
            offset = box.whole.upperBound
        }
        return boxes
    }

    static func box(_ name: StaticString) -> UInt32 { PictureFile.fourCC(name) }

    /// The `ftyp` brands of a video file a browser plays: ISO's, MPEG-4's, H.264's, Apple's
    /// (M4V, QuickTime), 3GPP's and DASH's. HEIF and AVIF pictures start with an `ftyp` too, of
    /// brands of their own (heic, mif1, avif): they are not clips.
    static let mp4Brands: Set<UInt32> = {
        let names: [StaticString] = [
            "isom", "iso2", "iso3", "iso4", "iso5", "iso6", "iso7", "iso8", "iso9", "mp41", "mp42", "avc1", "M4V ",
            "M4VP", "qt  ", "3gp4", "3gp5", "3gp6", "3g2a", "dash",
        ]
        return Set(names.map(box))
    }()

    /// Whether the file starts with an `ftyp` box (major_brand:4  minor_version:u32
    /// compatible_brands:4…) whose major brand or a compatible one is in ``mp4Brands``.
    static func isMP4(_ bytes: [UInt8]) -> Bool {
        guard bytes.fourCC(at: 4) == box("ftyp"), let size = bytes.bigEndian32(at: 0), size >= 16,
            bytes.hasBytes(size, at: 0)
        else { return false }
        let brands = [8] + Array(stride(from: 16, through: size - 4, by: 4))
        return brands.contains { bytes.fourCC(at: $0).map(mp4Brands.contains) == true }
    }

    /// 4 for a version 0 mvhd, tkhd or mdhd (32-bit times and duration), 8 for a version 1.
    static func mp4FieldWidth(_ bytes: [UInt8], _ box: MP4Box) throws(PictureFileError) -> Int {
        guard !box.payload.isEmpty, bytes[box.payload.lowerBound] <= 1 else {
            throw .malformed("an MP4 header box is empty or of an unknown version, at byte \(box.whole.lowerBound)")
        }
        return bytes[box.payload.lowerBound] == 0 ? 4 : 8
    }

    static func mp4Unsigned(_ bytes: [UInt8], at offset: Int, width: Int) -> UInt64? {
        width == 4 ? bytes.bigEndian32(at: offset).map(UInt64.init) : bytes.bigEndian64(at: offset)
    }

    static func first(_ type: StaticString, in boxes: [MP4Box]) -> MP4Box? { boxes.first { $0.type == box(type) } }

    /// Top-level boxes kept as they are: the file type, the media, and what a fragmented or
    /// streamed file indexes it with. `moov` is walked (``neutralizeMP4(_:in:parent:)``); every
    /// other box at the top becomes `free`: a file-level `meta`, XMP's `uuid`, a vendor's box of
    /// its own (Samsung's, a dashcam's GPS log), a producer's wall-clock time (`prft`), and free
    /// space that may still hold what was there before.
    static let keptMP4Boxes: Set<UInt32> = {
        let names: [StaticString] = ["ftyp", "mdat", "moof", "mfra", "styp", "sidx", "pdin"]
        return Set(names.map(box))
    }()

    /// Boxes that become `free` wherever the walk meets them: user data (`udta`: Apple's ©xyz
    /// location, ©mak and ©mod camera, ©day date, ©swr software, 3GPP's `loci`), metadata (`meta`:
    /// Apple's keys with com.apple.quicktime.location.ISO6709, iTunes' `ilst`), `uuid` boxes (XMP,
    /// vendors' data), and padding already there.
    static let mp4MetadataBoxes: Set<UInt32> = {
        let names: [StaticString] = ["udta", "meta", "uuid", "free", "skip", "wide"]
        return Set(names.map(box))
    }()

    /// The one container the walk enters inside each container: moov → trak → mdia → minf → stbl.
    /// A fixed path, so a file of boxes nested a million deep cannot make the walk recurse with it.
    static let mp4Path: [UInt32: UInt32] = [
        box("moov"): box("trak"), box("trak"): box("mdia"), box("mdia"): box("minf"), box("minf"): box("stbl"),
    ]

    /// Headers whose creation and modification times are zeroed: the movie's, each track's and
    /// each track's media's.
    static let mp4TimedBoxes: Set<UInt32> = [box("mvhd"), box("tkhd"), box("mdhd")]

    /// The MP4, same length, every byte of media at its offset, with ``mp4MetadataBoxes`` turned
    /// `free` inside `moov` and its tracks, every top-level box but ``keptMP4Boxes`` turned `free`,
    /// and the times of ``mp4TimedBoxes`` zeroed.
    static func strippedMP4(_ bytes: [UInt8]) throws(PictureFileError) -> [UInt8] {
        var output = bytes
        for box in try mp4Boxes(in: bytes, 0..<bytes.count) {
            if box.type == Self.box("moov") {
                try neutralizeMP4(&output, in: box.payload, parent: box.type)
            } else if !keptMP4Boxes.contains(box.type) {
                makeFree(&output, box)
            }
        }
        return output
    }

    /// Neutralizes the boxes in `range`, the payload of a `parent` on ``mp4Path``.
    static func neutralizeMP4(_ output: inout [UInt8], in range: Range<Int>, parent: UInt32) throws(PictureFileError) {
        for box in try mp4Boxes(in: output, range) {
            if mp4MetadataBoxes.contains(box.type) {
                makeFree(&output, box)
            } else if mp4TimedBoxes.contains(box.type) {
                let start = box.payload.lowerBound + 4
                let times = start..<start + 2 * (try mp4FieldWidth(output, box))
                guard times.upperBound <= box.payload.upperBound else {
                    throw .malformed("an MP4 header box is too short for its times, at byte \(box.whole.lowerBound)")
                }
                output.replaceSubrange(times, with: repeatElement(0, count: times.count))
            } else if mp4Path[parent] == box.type {
                try neutralizeMP4(&output, in: box.payload, parent: box.type)
            }
        }
    }

    /// Turns `box` into a `free` box of the same size (a 64-bit size stays as it is): the type
    /// becomes "free" and every byte after the size fields 0, a `uuid` box's usertype included.
    static func makeFree(_ output: inout [UInt8], _ box: MP4Box) {
        output.replaceSubrange(box.whole.lowerBound + 4..<box.whole.lowerBound + 8, with: Array("free".utf8))
        output.replaceSubrange(box.payload, with: repeatElement(0, count: box.payload.count))
    }
}
