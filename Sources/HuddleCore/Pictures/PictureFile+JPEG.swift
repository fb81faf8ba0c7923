/// JPEG: a walk over marker segments.
///
///     FF D8                              SOI, start of image
///     FF xx  length:u16  payload         a segment; length counts itself, not the marker
///     FF DA  length:u16  payload         SOS, then entropy-coded data up to the next marker
///                                        that is not FF 00 (a stuffed FF) or FF D0…D7 (RSTn)
///     FF D9                              EOI, end of image
///
/// Any number of FF fill bytes may come before a marker. A progressive JPEG has many scans, each
/// an SOS and its data, with tables between them.
extension PictureFile {
    /// One marker and the bytes it covers.
    struct JPEGMarker {
        var code: UInt8
        /// From the marker's FF (the last one, after any fill bytes) to the segment's last byte.
        var segment: Range<Int>
        /// The segment's bytes after its length; empty for a marker that stands alone.
        var payload: Range<Int>
    }

    /// The marker at `offset` (which must be an FF): its code and, unless it stands alone
    /// (SOI, EOI, RSTn, TEM), the segment its length covers, checked to lie within `bytes`.
    static func jpegMarker(in bytes: [UInt8], at offset: Int) throws(PictureFileError) -> JPEGMarker {
        guard offset >= 0, offset < bytes.count else { throw .malformed("the JPEG ends before its end-of-image marker") }
        guard bytes[offset] == 0xFF else { throw .malformed("no JPEG marker where one should be, at byte \(offset)") }
        var index = offset
        while index < bytes.count, bytes[index] == 0xFF { index += 1 }
        guard index < bytes.count else { throw .malformed("the JPEG ends inside a marker") }
        let code = bytes[index]
        let start = index - 1
        index += 1
        switch code {
        case 0x01, 0xD0...0xD9:
            return JPEGMarker(code: code, segment: start..<index, payload: index..<index)
        case 0x00:
            throw .malformed("a stuffed byte outside the JPEG's picture data, at byte \(start)")
        default:
            guard let length = bytes.bigEndian16(at: index), length >= 2, bytes.hasBytes(length, at: index) else {
                throw .malformed("a JPEG segment runs past the end of the file, at byte \(start)")
            }
            return JPEGMarker(code: code, segment: start..<index + length, payload: index + 2..<index + length)
        }
    }

    /// Whether `code` starts a frame header (SOF0…SOF15): the segment that holds the size. C4
    /// (DHT), C8 (reserved) and CC (DAC) sit in the same range but are not frames.
    static func isJPEGFrameHeader(_ code: UInt8) -> Bool {
        (0xC0...0xCF).contains(code) && code != 0xC4 && code != 0xC8 && code != 0xCC
    }

    /// Where the entropy-coded data that starts at `offset` ends: at the FF of the first marker
    /// that is neither a stuffed FF 00 nor a restart marker (RSTn, FF D0…D7).
    static func jpegEntropyEnd(in bytes: [UInt8], from offset: Int) throws(PictureFileError) -> Int {
        var index = offset
        while index < bytes.count - 1 {
            guard bytes[index] == 0xFF else {
                index += 1
                continue
            }
            let next = bytes[index + 1]
            guard next == 0x00 || (0xD0...0xD7).contains(next) else { return index }
            index += 2
        }
        throw .malformed("the JPEG ends inside its picture data")
    }

    /// Width and height from the first frame header (SOFn), skipping every segment before it by
    /// its length.
    static func jpegSize(_ bytes: [UInt8]) throws(PictureFileError) -> (width: Int, height: Int) {
        var offset = 2
        while true {
            let marker = try jpegMarker(in: bytes, at: offset)
            if isJPEGFrameHeader(marker.code) {
                // precision:u8  height:u16  width:u16  components:u8 …
                let start = marker.payload.lowerBound
                guard marker.payload.count >= 6, let height = bytes.bigEndian16(at: start + 1),
                    let width = bytes.bigEndian16(at: start + 3)
                else { throw .malformed("the JPEG frame header is too short") }
                return (width, height)
            }
            if marker.code == 0xDA || marker.code == 0xD9 {
                throw .malformed("the JPEG has no frame header before its picture data")
            }
            offset = marker.segment.upperBound
        }
    }

    /// The JPEG with only what decoding needs: frame headers (SOFn), Huffman and arithmetic
    /// tables (DHT, DAC), quantisation tables (DQT), restart interval (DRI), line count (DNL),
    /// every scan (SOS and its data) and EOI; of the APPn segments only JFIF (its thumbnail
    /// removed), an ICC colour profile (APP2) and Adobe's (APP14, which says how to convert the
    /// colours). Exif (with its GPS position, times, camera and serial number, and a thumbnail
    /// of the original), XMP, IPTC, comments and everything after EOI go.
    static func strippedJPEG(_ bytes: [UInt8]) throws(PictureFileError) -> [UInt8] {
        var output: [UInt8] = [0xFF, 0xD8]
        output.reserveCapacity(bytes.count)
        var offset = 2
        var sawFrameHeader = false
        while true {
            let marker = try jpegMarker(in: bytes, at: offset)
            offset = marker.segment.upperBound
            switch marker.code {
            case 0xD9:
                output += [0xFF, 0xD9]
                return output
            case 0xD8:
                throw .malformed("a second start-of-image marker in the JPEG")
            case 0xDA:
                guard sawFrameHeader else { throw .malformed("a JPEG scan before its frame header") }
                let end = try jpegEntropyEnd(in: bytes, from: offset)
                output += bytes[marker.segment.lowerBound..<end]
                offset = end
            default:
                sawFrameHeader = sawFrameHeader || isJPEGFrameHeader(marker.code)
                output += keptJPEGSegment(marker, in: bytes)
            }
        }
    }

    static let jfifIdentifier = Array("JFIF\0".utf8)
    static let iccIdentifier = Array("ICC_PROFILE\0".utf8)
    static let adobeIdentifier = Array("Adobe".utf8)

    /// The bytes of a segment that decoding needs (as they are, but for JFIF's thumbnail), or
    /// none for one that stripping drops.
    static func keptJPEGSegment(_ marker: JPEGMarker, in bytes: [UInt8]) -> ArraySlice<UInt8> {
        let start = marker.payload.lowerBound
        switch marker.code {
        case 0xC0...0xCF, 0xDB, 0xDC, 0xDD:  // SOFn, DHT, DAC; DQT, DNL, DRI
            return marker.code == 0xC8 ? [] : bytes[marker.segment]
        case 0xE0 where bytes.hasBytes(jfifIdentifier, at: start) && marker.payload.count >= 14:
            return ArraySlice(jfifWithoutThumbnail(bytes[start..<start + 12]))
        case 0xE2 where bytes.hasBytes(iccIdentifier, at: start),
            0xEE where bytes.hasBytes(adobeIdentifier, at: start):
            return bytes[marker.segment]
        default:
            return []
        }
    }

    /// An APP0 JFIF segment of `fields` (identifier, version, density units and densities:
    /// 12 bytes) and a thumbnail of 0 x 0: a thumbnail is a small copy of the picture as it was
    /// taken, which may show what was cropped out before sending.
    static func jfifWithoutThumbnail(_ fields: ArraySlice<UInt8>) -> [UInt8] {
        [0xFF, 0xE0, 0x00, 0x10] + fields + [0x00, 0x00]
    }
}
