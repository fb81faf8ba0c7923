@testable import HuddleCore

/// Test clips built byte by byte, laden with what a phone or a recorder writes about a clip: a
/// location, a camera, a date, a title, XMP, a GPS tag. Their media is a run of recognizable
/// bytes, not a picture: nothing here decodes it.
enum ClipSamples {
    /// A file, the header it reads to, where its media lies (stripping must leave those bytes as
    /// they are), and where the clip ends (what follows is not part of it).
    struct Sample {
        var name: String
        var bytes: [UInt8]
        var header: ClipHeader
        var media: Range<Int>
        var end: Int
        /// Which of ``leakMarkers`` it carries (all must be gone once stripped).
        var markers: Set<String>
    }

    static var all: [Sample] {
        [
            mp4(), mp4(version: 1), mp4(faststart: true, largeMedia: true), mp4(faststart: true, mediaToEnd: true),
            mp4(portrait: true, sizeInSampleEntryOnly: true), webm(), webm(float32: true, scale: 100_000), liveWebM(),
        ]
    }

    static let mp4Times: [UInt8] = [0xE3, 0xD6, 0x5C, 0x1B]
    static let webmDate: [UInt8] = [0x0B, 0x7E, 0x0D, 0xA2, 0x51, 0x4F, 0x93, 0x00]

    /// What must not survive stripping: a place, a camera, XMP, a date (as text, as an MP4
    /// header's seconds since 1904, as a WebM DateUTC), a title, a GPS tag.
    static let leakMarkers: [String: [UInt8]] = [
        "location": ascii("+40.8135"), "camera": ascii("HuddleCam"), "xmp": ascii("xmpmeta"), "date": ascii("2025-02-09"),
        "title": ascii("HuddleTitle"), "gps": ascii("GPS"), "mp4 time": mp4Times, "webm date": webmDate,
    ]

    static func leaks(in bytes: [UInt8]) -> Set<String> {
        Set(leakMarkers.filter { PictureSamples.contains(bytes, $0.value) }.keys)
    }

    static func ascii(_ text: String) -> [UInt8] { PictureSamples.ascii(text) }
    static func be(_ value: Int, _ count: Int) -> [UInt8] { PictureSamples.be(value, count) }
    static func zeros(_ count: Int) -> [UInt8] { [UInt8](repeating: 0, count: count) }
    static func name(_ type: UInt32) -> String { String(decoding: be(Int(type), 4), as: UTF8.self) }

    /// Recognizable media: "MEDIA", then every byte value up to 199 (none of the markers).
    static let mediaBytes = ascii("MEDIA") + (0..<200).map { UInt8($0) }

    // MARK: MP4

    static func box(_ type: [UInt8], _ payload: [UInt8]) -> [UInt8] { be(8 + payload.count, 4) + type + payload }
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { box(ascii(type), payload) }
    static func fullBox(_ type: String, version: UInt8 = 0, _ payload: [UInt8]) -> [UInt8] { box(type, [version, 0, 0, 0] + payload) }
    /// An Apple user-data item, named © (0xA9, one byte in Mac Roman) and three letters.
    static func appleItem(_ name: String, _ text: String) -> [UInt8] {
        box([0xA9] + ascii(name), be(text.utf8.count, 2) + be(0x15C7, 2) + ascii(text))
    }

    static let identity = [0x1_0000, 0, 0, 0, 0x1_0000, 0, 0, 0, 0x4000_0000].flatMap { be($0, 4) }
    static let quarterTurn = [0, 0x1_0000, 0, -0x1_0000, 0, 0, 0, 0, 0x4000_0000].flatMap { be($0, 4) }

    /// Creation and modification time, 32 bits each in version 0 and 64 in version 1.
    static func times(_ version: UInt8) -> [UInt8] {
        version == 0 ? mp4Times + mp4Times : zeros(4) + mp4Times + zeros(4) + mp4Times
    }
    static func duration(_ version: UInt8, _ value: Int) -> [UInt8] { be(value, version == 0 ? 4 : 8) }

    static func mvhd(version: UInt8, timescale: Int, duration ticks: Int) -> [UInt8] {
        fullBox(
            "mvhd", version: version,
            times(version) + be(timescale, 4) + duration(version, ticks) + be(0x1_0000, 4) + be(0x100, 2) + zeros(10)
                + identity + zeros(24) + be(3, 4))
    }

    static func tkhd(version: UInt8, track: Int, width: Int, height: Int, matrix: [UInt8] = identity) -> [UInt8] {
        fullBox(
            "tkhd", version: version,
            times(version) + be(track, 4) + zeros(4) + duration(version, 3000) + zeros(8) + zeros(4) + be(0x100, 2)
                + zeros(2) + matrix + be(width << 16, 4) + be(height << 16, 4))
    }

    static func mdhd(version: UInt8) -> [UInt8] {
        fullBox("mdhd", version: version, times(version) + be(1000, 4) + duration(version, 3000) + be(0x55C4, 2) + zeros(2))
    }

    static func hdlr(_ handler: String, _ name: String) -> [UInt8] {
        fullBox("hdlr", zeros(4) + ascii(handler) + zeros(12) + ascii(name + "\0"))
    }

    /// A video track: its header, media header, handler, sample description, and a chunk offset
    /// table (stco) holding `mediaOffset`; a udta of its own with a location.
    static func videoTrack(version: UInt8, width: Int, height: Int, matrix: [UInt8], entry: (Int, Int), mediaOffset: Int) -> [UInt8] {
        let avc1 = box(
            "avc1",
            zeros(6) + be(1, 2) + zeros(16) + be(entry.0, 2) + be(entry.1, 2) + be(0x48_0000, 4) + be(0x48_0000, 4)
                + zeros(4) + be(1, 2) + [5] + ascii("H.264") + zeros(26) + be(0x18, 2) + be(0xFFFF, 2))
        let stbl = box(
            "stbl",
            fullBox("stsd", be(1, 4) + avc1) + fullBox("stts", be(1, 4) + be(1, 4) + be(3000, 4))
                + fullBox("stsc", be(1, 4) + be(1, 4) + be(1, 4) + be(1, 4)) + fullBox("stsz", be(mediaBytes.count, 4) + be(1, 4))
                + fullBox("stco", be(1, 4) + be(mediaOffset, 4)))
        let minf = box("minf", fullBox("vmhd", zeros(8)) + stbl)
        let mdia = box("mdia", mdhd(version: version) + hdlr("vide", "VideoHandler") + minf)
        return box(
            "trak", tkhd(version: version, track: 1, width: width, height: height, matrix: matrix) + mdia
                + box("udta", appleItem("xyz", "+40.8135-074.0745/")))
    }

    static let audioTrack = box(
        "trak",
        tkhd(version: 0, track: 2, width: 0, height: 0)
            + box("mdia", mdhd(version: 0) + hdlr("soun", "SoundHandler") + box("minf", box("stbl", fullBox("stsd", be(0, 4))))))

    /// Apple's metadata: keys naming the location and the make, and their values.
    static let appleMeta: [UInt8] = {
        let keys = ["com.apple.quicktime.location.ISO6709", "com.apple.quicktime.make"]
            .map { box("mdta", ascii($0)) }
        let values = ["+40.8135-074.0745+012.000/", "HuddleCam"].enumerated()
            .map { box(be($0.offset + 1, 4), box("data", be(1, 4) + zeros(4) + ascii($0.element))) }
        return box("meta", hdlr("mdta", "") + fullBox("keys", be(2, 4) + keys.joined()) + box("ilst", Array(values.joined())))
    }()

    static let xmpUUID: [UInt8] = [0xBE, 0x7A, 0xCF, 0xCB, 0x97, 0xA9, 0x42, 0xE8, 0x9C, 0x71, 0x99, 0x94, 0x91, 0xE3, 0xAF, 0xAC]
    static let xmpBox = box(
        "uuid", xmpUUID + ascii("<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><exif:GPSLatitude>40,48.81N</exif:GPSLatitude></x:xmpmeta>"))

    /// An MP4 as a phone or ffmpeg writes one: `ftyp`, then the media and the movie box in either
    /// order; the movie box with user data (location, camera, date, title), Apple's metadata, and
    /// a video track and an audio track; an XMP `uuid` box, a vendor's box and old free space.
    /// `largeMedia` gives `mdat` a 64-bit size, `mediaToEnd` a size of 0 (to the end of the file).
    static func mp4(
        version: UInt8 = 0, faststart: Bool = false, largeMedia: Bool = false, mediaToEnd: Bool = false,
        portrait: Bool = false, sizeInSampleEntryOnly: Bool = false
    ) -> Sample {
        let ftyp = box("ftyp", ascii("isom") + be(0x200, 4) + ascii("isomiso2avc1mp41"))
        let oldFree = box("free", ascii("IsoMedia File Produced by HuddleCam 2025-02-09"))
        let mdatHeader =
            largeMedia
            ? be(1, 4) + ascii("mdat") + be(16 + mediaBytes.count, 8)
            : be(mediaToEnd ? 0 : 8 + mediaBytes.count, 4) + ascii("mdat")
        let mdat = mdatHeader + mediaBytes
        let (timescale, ticks) = version == 0 ? (1000, 3000) : (90_000, 270_000)
        let tkhdSize = sizeInSampleEntryOnly ? (0, 0) : (1280, 720)
        func moov(mediaOffset: Int) -> [UInt8] {
            let udta = box(
                "udta",
                appleItem("xyz", "+40.8135-074.0745/") + appleItem("mak", "HuddleCam") + appleItem("day", "2025-02-09T18:31:07Z")
                    + appleItem("nam", "HuddleTitle"))
            let video = videoTrack(
                version: version, width: tkhdSize.0, height: tkhdSize.1, matrix: portrait ? quarterTurn : identity,
                entry: (1280, 720), mediaOffset: mediaOffset)
            return box("moov", mvhd(version: version, timescale: timescale, duration: ticks) + video + audioTrack + udta + appleMeta)
        }
        let vendor = box("smta", ascii("HuddleCam SN-12345 GPS log"))
        var bytes: [UInt8]
        let mediaStart: Int
        if faststart {
            let before = ftyp.count + moov(mediaOffset: 0).count + xmpBox.count + vendor.count
            mediaStart = before + mdatHeader.count
            bytes = ftyp + moov(mediaOffset: mediaStart) + xmpBox + vendor + mdat
        } else {
            mediaStart = ftyp.count + oldFree.count + mdatHeader.count
            bytes = ftyp + oldFree + mdat + moov(mediaOffset: mediaStart) + xmpBox + vendor
        }
        let size = portrait ? (720, 1280) : (1280, 720)
        return Sample(
            name: "mp4 v\(version)\(faststart ? " faststart" : "")\(largeMedia ? " largesize" : "")\(mediaToEnd ? " to-end" : "")"
                + (portrait ? " portrait" : ""),
            bytes: bytes, header: ClipHeader(type: .mp4, milliseconds: 3000, width: size.0, height: size.1),
            media: mediaStart..<mediaStart + mediaBytes.count, end: bytes.count,
            markers: ["location", "camera", "xmp", "date", "title", "gps", "mp4 time"])
    }

    /// An MP4 of one 640 × 360 video track whose movie lasts `ticks` of `timescale`.
    static func mp4(timescale: Int, ticks: Int, version: UInt8 = 0, matrix: [UInt8] = identity) -> [UInt8] {
        let video = videoTrack(
            version: version, width: 640, height: 360, matrix: matrix, entry: (640, 360), mediaOffset: 0)
        return box("ftyp", ascii("mp42") + zeros(4) + ascii("isommp42"))
            + box("moov", mvhd(version: version, timescale: timescale, duration: ticks) + video) + box("mdat", mediaBytes)
    }

    // MARK: WebM

    static func id(_ value: UInt32) -> [UInt8] { Array(be(Int(value), 4).drop { $0 == 0 }) }

    /// A size as a vint: one byte under 127, two under 16383, else eight (as ffmpeg writes a Segment's).
    static func size(_ count: Int) -> [UInt8] {
        count < 127 ? [0x80 | UInt8(count)] : count < 16383 ? be(0x4000 | count, 2) : [0x01] + be(count, 7)
    }

    static func element(_ value: UInt32, _ data: [UInt8]) -> [UInt8] { id(value) + size(data.count) + data }
    static func unsigned(_ value: UInt32, _ number: Int) -> [UInt8] { element(value, Array(be(number, 8).drop { $0 == 0 })) }
    static let unknownSize: [UInt8] = [0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]

    static func ebmlHeader(docType: String = "webm") -> [UInt8] {
        element(
            0x1A45_DFA3,
            unsigned(0x4286, 1) + unsigned(0x42F7, 1) + unsigned(0x42F2, 4) + unsigned(0x42F3, 8) + element(0x4282, ascii(docType))
                + unsigned(0x4287, 4) + unsigned(0x4285, 2))
    }

    static func info(scale: Int?, duration: [UInt8]?) -> [UInt8] {
        element(
            0x1549_A966,
            (scale.map { unsigned(0x2A_D7B1, $0) } ?? []) + (duration.map { element(0x4489, $0) } ?? [])
                + element(0x4461, webmDate) + element(0x7BA9, ascii("HuddleTitle")) + element(0x4D80, ascii("HuddleCam Muxer"))
                + element(0x5741, ascii("HuddleCam Recorder 2025-02-09")))
    }

    static func double(_ value: Double) -> [UInt8] { be(Int(bitPattern: UInt(value.bitPattern)), 8) }
    static func float(_ value: Float) -> [UInt8] { be(Int(value.bitPattern), 4) }

    /// An audio track, then a 1280 × 720 video track named by its phone.
    static let tracks = element(
        0x1654_AE6B,
        element(0xAE, unsigned(0xD7, 1) + unsigned(0x73C5, 11) + unsigned(0x83, 2) + element(0x86, ascii("A_OPUS")))
            + element(
                0xAE,
                unsigned(0xD7, 2) + unsigned(0x73C5, 12) + unsigned(0x83, 1) + element(0x86, ascii("V_VP9"))
                    + element(0xE0, unsigned(0xB0, 1280) + unsigned(0xBA, 720))))

    static func simpleTag(_ name: String, _ value: String) -> [UInt8] {
        element(0x67C8, element(0x45A3, ascii(name)) + element(0x4487, ascii(value)))
    }

    static let tags = element(
        0x1254_C367,
        element(
            0x7373,
            element(0x63C0, []) + simpleTag("GPS", "+40.8135-074.0745/") + simpleTag("DATE_RECORDED", "2025-02-09")
                + simpleTag("MAKE", "HuddleCam")))
    static let attachments = element(
        0x1941_A469,
        element(
            0x61A7,
            element(0x466E, ascii("meta.xmp")) + element(0x4660, ascii("application/rdf+xml"))
                + element(0x465C, ascii("<x:xmpmeta/>")) + unsigned(0x46AE, 7)))
    static let cluster = element(0x1F43_B675, unsigned(0xE7, 0) + element(0xA3, [0x81, 0, 0, 0x80] + mediaBytes))

    /// A WebM saved whole (as ffmpeg writes one): a Segment of known size with a SeekHead, old
    /// padding, Info, Tracks, Tags and Attachments, a Cluster, Cues, and more Tags after them.
    static func webm(float32: Bool = false, scale: Int = 1_000_000) -> Sample {
        let units = 3000 * 1_000_000 / scale
        let info = info(scale: scale, duration: float32 ? float(Float(units)) : double(Double(units)))
        let void = element(0xEC, ascii("old GPS tags"))
        let cues = element(0x1C53_BB6B, element(0xBB, unsigned(0xB3, 0) + element(0xB7, unsigned(0xF7, 2) + unsigned(0xF1, 0))))
        let lateTags = element(0x1254_C367, element(0x7373, element(0x63C0, []) + simpleTag("GPS", "+40.8135")))
        let body = [void, info, tracks, tags, attachments, cluster, cues, lateTags]
        let targets: [UInt32] = [0x1549_A966, 0x1654_AE6B, 0x1254_C367, 0x1941_A469, 0x1F43_B675, 0x1C53_BB6B, 0x1254_C367]
        func seekHead(_ positions: [Int]) -> [UInt8] {
            element(
                0x114D_9B74,
                zip(targets, positions).flatMap { element(0x4DBB, element(0x53AB, id($0.0)) + element(0x53AC, be($0.1, 4))) })
        }
        var positions: [Int] = []
        var offset = seekHead(Array(repeating: 0, count: targets.count)).count
        for element in body {
            positions.append(offset)
            offset += element.count
        }
        let children = seekHead(Array(positions.dropFirst())) + body.joined()
        let header = ebmlHeader()
        let segmentStart = header.count + 4 + 8
        let bytes = header + id(0x1853_8067) + [0x01] + be(children.count, 7) + children
        let clusterStart = segmentStart + positions[5]
        return Sample(
            name: "webm\(float32 ? " float32" : "") scale \(scale)", bytes: bytes,
            header: ClipHeader(type: .webm, milliseconds: 3000, width: 1280, height: 720),
            media: clusterStart..<clusterStart + cluster.count, end: bytes.count,
            markers: ["location", "camera", "xmp", "date", "title", "gps", "webm date"])
    }

    /// A WebM as a live recorder writes it: a Segment and Clusters of unknown size, running to
    /// the end of the file (and a Duration, as one fixed up afterwards has; a browser's has none).
    static func liveWebM(duration: [UInt8]? = float(3000)) -> Sample {
        let head = ebmlHeader() + id(0x1853_8067) + unknownSize + info(scale: nil, duration: duration) + tracks + tags
        let clusters = (0..<3).flatMap {
            id(0x1F43_B675) + unknownSize + unsigned(0xE7, $0 * 1000) + element(0xA3, [0x81, 0, 0, 0x80] + mediaBytes)
        }
        let bytes = head + clusters
        return Sample(
            name: "live webm", bytes: bytes, header: ClipHeader(type: .webm, milliseconds: 3000, width: 1280, height: 720),
            media: head.count..<bytes.count, end: bytes.count,
            markers: ["location", "camera", "date", "title", "gps", "webm date"])
    }

    /// A WebM whose Info gives `duration` (a double) in milliseconds.
    static func webm(milliseconds: Double) -> [UInt8] {
        ebmlHeader() + element(0x1853_8067, info(scale: 1_000_000, duration: double(milliseconds)) + tracks + cluster)
    }
}
