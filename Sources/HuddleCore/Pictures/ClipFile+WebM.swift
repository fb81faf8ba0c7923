/// WebM: an EBML header, then one Segment holding the rest (see ``ClipFile`` +EBML for elements).
///
///     EBML { DocType "webm" … }
///     Segment { SeekHead { Seek { SeekID  SeekPosition } … }
///               Info { TimecodeScale  Duration  DateUTC  Title  MuxingApp  WritingApp }
///               Tracks { TrackEntry { TrackType (1: video)  Video { PixelWidth  PixelHeight } } … }
///               Tags { Tag { SimpleTag { TagName  TagString } } }  Attachments
///               Cluster …  Cues  Tags }
///
/// Info's Duration is a float in TimecodeScale nanoseconds (1 000 000 unless given, so
/// milliseconds). A recorder writes Clusters in order; a file saved whole may put Cues and Tags
/// after them, a live recorder gives the Segment and each Cluster an unknown size.
extension ClipFile {
    static let ebmlHeaderID: UInt32 = 0x1A45_DFA3
    static let docTypeID: UInt32 = 0x4282
    static let segmentID: UInt32 = 0x1853_8067
    static let seekHeadID: UInt32 = 0x114D_9B74
    static let seekID: UInt32 = 0x4DBB
    static let seekIDID: UInt32 = 0x53AB
    static let infoID: UInt32 = 0x1549_A966
    static let timecodeScaleID: UInt32 = 0x2A_D7B1
    static let durationID: UInt32 = 0x4489
    static let tracksID: UInt32 = 0x1654_AE6B
    static let trackEntryID: UInt32 = 0xAE
    static let trackTypeID: UInt32 = 0x83
    static let videoID: UInt32 = 0xE0
    static let pixelWidthID: UInt32 = 0xB0
    static let pixelHeightID: UInt32 = 0xBA
    static let tagsID: UInt32 = 0x1254_C367
    static let attachmentsID: UInt32 = 0x1941_A469
    static let clusterID: UInt32 = 0x1F43_B675
    static let crc32ID: UInt32 = 0xBF

    /// Whether the file starts with an EBML header (of a known size, within the file) whose
    /// DocType is "webm" (EBML strings may be padded with zeros). Matroska's "matroska" is not:
    /// browsers do not play it.
    static func isWebM(_ bytes: [UInt8]) -> Bool {
        guard let header = try? ebmlElement(in: bytes, at: 0, end: bytes.count), header.id == ebmlHeaderID,
            !header.sizeIsUnknown, let fields = try? ebmlChildren(in: bytes, header.data),
            let docType = fields.first(where: { $0.id == docTypeID })
        else { return false }
        return bytes[docType.data].reversed().drop { $0 == 0 }.reversed().elementsEqual("webm".utf8)
    }

    /// What stripping and the header look at: every element from the EBML header's end to the
    /// Segment's (Voids before it, then the Segment's children), stopping after a Cluster of
    /// unknown size, past which lies only media; and where the Segment ends (the file's end when
    /// its size is unknown). Bytes after a Segment of known size are not part of the clip.
    static func webmLayout(_ bytes: [UInt8]) throws(PictureFileError) -> (elements: [EBMLElement], end: Int) {
        let header = try ebmlElement(in: bytes, at: 0, end: bytes.count)
        var elements: [EBMLElement] = []
        var offset = header.whole.upperBound
        var segment = try ebmlElement(in: bytes, at: offset, end: bytes.count)
        while segment.id != segmentID {
            guard segment.id == UInt32(voidID) || segment.id == crc32ID, !segment.sizeIsUnknown else {
                throw .malformed("the WebM's header is not followed by its Segment")
            }
            elements.append(segment)
            offset = segment.whole.upperBound
            segment = try ebmlElement(in: bytes, at: offset, end: bytes.count)
        }
        offset = segment.data.lowerBound
        while offset < segment.data.upperBound {
            let element = try ebmlElement(in: bytes, at: offset, end: segment.data.upperBound)
            elements.append(element)
            if element.sizeIsUnknown {
                guard element.id == clusterID else {
                    throw .malformed("a WebM element that may not have an unknown size has one, at byte \(offset)")
                }
                break
            }
            offset = element.whole.upperBound
        }
        return (elements, segment.whole.upperBound)
    }

    /// Duration from the first Info, size from the first video TrackEntry of the first Tracks.
    static func webmHeader(_ bytes: [UInt8]) throws(PictureFileError) -> ClipHeader {
        let elements = try webmLayout(bytes).elements
        guard let info = elements.first(where: { $0.id == infoID }) else { throw .malformed("the WebM has no Info") }
        var scale: UInt64 = 1_000_000
        var duration: Double?
        for field in try ebmlChildren(in: bytes, info.data) {
            if field.id == timecodeScaleID { scale = try ebmlUnsigned(bytes, field) }
            if field.id == durationID { duration = try ebmlFloat(bytes, field) }
        }
        guard scale > 0 else { throw .malformed("the WebM gives a TimecodeScale of 0") }
        // A live recorder (a browser's MediaRecorder) leaves it out: it could only be counted from every Cluster.
        guard let duration else { throw .malformed("the WebM does not say how long it is (no Duration in its Info)") }
        guard duration.isFinite, duration >= 0 else {
            throw .malformed("the WebM's Duration is not a number of 0 or more")
        }
        let milliseconds = (duration * Double(scale) / 1_000_000).rounded()
        guard let tracks = elements.first(where: { $0.id == tracksID }) else {
            throw .malformed("the WebM has no Tracks")
        }
        for entry in try ebmlChildren(in: bytes, tracks.data) where entry.id == trackEntryID {
            let fields = try ebmlChildren(in: bytes, entry.data)
            guard let type = fields.first(where: { $0.id == trackTypeID }), try ebmlUnsigned(bytes, type) == 1 else {
                continue
            }
            guard let video = fields.first(where: { $0.id == videoID }) else {
                throw .malformed("a WebM video track has no Video settings")
            }
            var size: (width: UInt64, height: UInt64) = (0, 0)
            for field in try ebmlChildren(in: bytes, video.data) {
                if field.id == pixelWidthID { size.width = try ebmlUnsigned(bytes, field) }
                if field.id == pixelHeightID { size.height = try ebmlUnsigned(bytes, field) }
            }
            return ClipHeader(
                type: .webm, milliseconds: milliseconds < 9e18 ? Int(milliseconds) : .max,
                width: Int(clamping: size.width), height: Int(clamping: size.height))
        }
        throw .malformed("the WebM has no video track")
    }

    /// Info's fields that become Void: when the file was made (DateUTC), its title, and the
    /// programs that wrote it (MuxingApp, WritingApp: a phone's app and its version say whose it is).
    static let voidedInfoFields: Set<UInt32> = [0x4461, 0x7BA9, 0x4D80, 0x5741, UInt32(voidID), crc32ID]

    /// The WebM, every element before the first Cluster of unknown size at its offset and of its
    /// length, with Tags (where a recorder writes a place, a date, a device) and Attachments (a
    /// cover picture and its file name) turned Void, ``voidedInfoFields`` turned Void inside Info,
    /// and the SeekHead's entries for Tags and Attachments turned Void, so that none points to
    /// padding. A CRC-32 beside what changed would no longer match: it becomes Void too, and so
    /// does every Void already there (padding may hold what was there before). Bytes after a
    /// Segment of known size go.
    static func strippedWebM(_ bytes: [UInt8]) throws(PictureFileError) -> [UInt8] {
        let layout = try webmLayout(bytes)
        var output = Array(bytes[..<layout.end])
        for element in layout.elements {
            switch element.id {
            case tagsID, attachmentsID, UInt32(voidID), crc32ID:
                writeVoid(&output, over: element.whole)
            case infoID:
                for field in try ebmlChildren(in: bytes, element.data) where voidedInfoFields.contains(field.id) {
                    writeVoid(&output, over: field.whole)
                }
            case seekHeadID:
                for seek in try ebmlChildren(in: bytes, element.data) {
                    if try isVoidedSeek(bytes, seek) { writeVoid(&output, over: seek.whole) }
                }
            default:
                continue
            }
        }
        return output
    }

    /// Whether a SeekHead's child goes: a Void or a CRC-32, or a Seek whose SeekID is Tags' or
    /// Attachments' (SeekID holds the ID's bytes as written).
    static func isVoidedSeek(_ bytes: [UInt8], _ seek: EBMLElement) throws(PictureFileError) -> Bool {
        if seek.id == UInt32(voidID) || seek.id == crc32ID { return true }
        guard seek.id == seekID, let target = try ebmlChildren(in: bytes, seek.data).first(where: { $0.id == seekIDID })
        else { return false }
        let id = bytes[target.data].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return target.data.count == 4 && (id == tagsID || id == attachmentsID)
    }
}
