import Testing
@testable import HuddleCore

/// The test pictures and the byte helpers that build them.
enum PictureSamples {
    /// A file, what stripping it must give, and where the picture in it ends (what follows is
    /// trailing bytes that stripping drops).
    struct Sample {
        var bytes: [UInt8]
        var stripped: [UInt8]
        var pictureEnd: Int
    }

    static var all: [Sample] { [jpeg(), progressiveJPEG(), png(), webp()] }

    /// What must not survive stripping: a position, a serial number, a camera, Exif and XMP
    /// headers, a comment.
    static let leakMarkers = ["GPS", "SN-12345", "HuddleCam", "Exif", "http://ns.adobe.com/xap", "MetLife"].map(ascii)

    static func leaks(in bytes: [UInt8]) -> [String] {
        leakMarkers.filter { contains(bytes, $0) }.map { String(decoding: $0, as: UTF8.self) }
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...haystack.count - needle.count).contains { haystack[$0..<$0 + needle.count].elementsEqual(needle) }
    }

    static func isMalformed<T>(_ body: () throws -> T) -> Bool {
        do {
            _ = try body()
            return false
        } catch {
            if case .malformed = error as? PictureFileError { return true }
            return false
        }
    }

    static func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }
    static func be(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    static func le(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    // MARK: JPEG

    static func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] { [0xFF, marker] + be(payload.count + 2, 2) + payload }

    static let soi: [UInt8] = [0xFF, 0xD8]
    static let eoi: [UInt8] = [0xFF, 0xD9]
    static let jfifFields = ascii("JFIF\0") + [1, 1, 1, 0, 72, 0, 72]
    static let exif = segment(0xE1, ascii("Exif\0\0MM\0*\0\0\0\u{8}GPS 40.8135N 74.0745W Make HuddleCam SN-12345"))
    static let xmp = segment(0xE1, ascii("http://ns.adobe.com/xap/1.0/\0<x:xmpmeta exif:GPSLatitude=\"40,48.81N\"/>"))
    static let dqt = segment(0xDB, [0x00] + (1...64).map { UInt8($0) })
    static let dht = segment(0xC4, [0x00, 1] + [UInt8](repeating: 0, count: 15) + [0x05])
    static let sos = segment(0xDA, [3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0])

    static func frame(_ marker: UInt8, width: Int, height: Int) -> [UInt8] {
        segment(marker, [8] + be(height, 2) + be(width, 2) + [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1])
    }

    /// A baseline JPEG laden with JFIF, Exif, XMP and a comment, and text after its EOI.
    static func jpeg(width: Int = 640, height: Int = 480) -> Sample {
        let jfif = segment(0xE0, jfifFields + [0, 0])
        let comment = segment(0xFE, ascii("shot at MetLife"))
        let sof0 = frame(0xC0, width: width, height: height)
        let entropy: [UInt8] = [0x12, 0x34, 0xFF, 0x00, 0x56, 0xFF, 0xD0, 0x78, 0x9A, 0xFF, 0x00, 0xBC]
        let picture = soi + jfif + exif + xmp + comment + dqt + sof0 + dht + sos + entropy + eoi
        return Sample(
            bytes: picture + ascii("GPS SN-12345 after the end"),
            stripped: soi + jfif + dqt + sof0 + dht + sos + entropy + eoi, pictureEnd: picture.count)
    }

    /// A progressive JPEG (SOF2) of two scans with tables and fill bytes between them; an ICC
    /// profile, Adobe's segment, a JFIF thumbnail, IPTC, and Exif between the scans.
    static func progressiveJPEG() -> Sample {
        let icc = segment(0xE2, ascii("ICC_PROFILE\0") + [1, 1] + ascii("appl mntr RGB XYZ profile"))
        let adobe = segment(0xEE, ascii("Adobe") + [0, 100, 0, 0, 0, 0, 1])
        let jfifWithThumbnail = segment(0xE0, jfifFields + [2, 1] + [UInt8](repeating: 0x80, count: 6))
        let iptc = segment(0xED, ascii("Photoshop 3.0\08BIM\u{4}\u{4}\0\0\0\0\0\u{10}SN-12345 MetLife"))
        let sof2 = frame(0xC2, width: 1920, height: 1080)
        let dri = segment(0xDD, be(4, 2))
        let scan1 = sos + [0x01, 0xFF, 0x00, 0xFF, 0xD1, 0x02, 0xFF, 0xD2]
        let scan2 = sos + [0x03, 0x04, 0xFF, 0x00]
        let fill: [UInt8] = [0xFF, 0xFF]
        let picture = soi + icc + adobe + jfifWithThumbnail + iptc + dqt + sof2 + dht + dri + scan1 + fill + dht + exif + scan2 + eoi
        return Sample(
            bytes: picture,
            stripped: soi + icc + adobe + segment(0xE0, jfifFields + [0, 0]) + dqt + sof2 + dht + dri + scan1 + dht + scan2 + eoi,
            pictureEnd: picture.count)
    }

    // MARK: PNG

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ crc >> 1 : crc >> 1 }
        }
        return ~crc
    }

    static func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        be(data.count, 4) + ascii(type) + data + be(Int(crc32(ascii(type) + data)), 4)
    }

    static func ihdr(width: Int, height: Int) -> [UInt8] { pngChunk("IHDR", be(width, 4) + be(height, 4) + [8, 2, 0, 0, 0]) }

    /// Signature, IHDR of the size, one small IDAT, IEND: a decompression bomb's header.
    static func pngHeader(width: Int, height: Int) -> [UInt8] {
        PictureFile.pngSignature + ihdr(width: width, height: height) + pngChunk("IDAT", [0x78, 0x9C, 0x03, 0x00]) + pngChunk("IEND", [])
    }

    /// A PNG with text, Exif, a time, XMP and a private chunk, and text after its IEND.
    static func png() -> Sample {
        let header = ihdr(width: 640, height: 480)
        let phys = pngChunk("pHYs", be(2835, 4) + be(2835, 4) + [1])
        let idat = pngChunk("IDAT", [0x78, 0x9C, 0x63, 0x60, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01])
        let iend = pngChunk("IEND", [])
        let picture = PictureFile.pngSignature + header
            + pngChunk("tEXt", ascii("Comment\0shot at MetLife")) + pngChunk("eXIf", ascii("MM\0*GPS SN-12345"))
            + pngChunk("tIME", [0x07, 0xE9, 2, 9, 23, 30, 5]) + phys
            + pngChunk("iTXt", ascii("XML:com.adobe.xmp\0\0\0\0\0<x:xmpmeta xmlns:x=\"http://ns.adobe.com/xap/1.0/\"/>"))
            + idat + pngChunk("prVt", ascii("HuddleCam SN-12345")) + iend
        return Sample(
            bytes: picture + ascii("GPS"), stripped: PictureFile.pngSignature + header + phys + idat + iend,
            pictureEnd: picture.count)
    }

    // MARK: WebP

    static func webpChunk(_ fourCC: String, _ data: [UInt8]) -> [UInt8] {
        ascii(fourCC) + le(data.count, 4) + data + (data.count % 2 == 1 ? [0] : [])
    }

    static func riff(_ chunks: [UInt8]) -> [UInt8] { ascii("RIFF") + le(chunks.count + 4, 4) + ascii("WEBP") + chunks }

    /// A VP8 key frame's first bytes: frame tag, start code, 14-bit width and height; 13 bytes,
    /// so its chunk needs a pad byte.
    static func vp8Frame(width: Int, height: Int) -> [UInt8] {
        [0x50, 0x02, 0x00, 0x9D, 0x01, 0x2A] + le(width, 2) + le(height, 2) + [0x11, 0x22, 0x33]
    }

    static func simpleWebP(vp8 frame: [UInt8]) -> [UInt8] { riff(webpChunk("VP8 ", frame)) }
    static func simpleWebP(vp8l frame: [UInt8]) -> [UInt8] { riff(webpChunk("VP8L", frame)) }

    /// An extended WebP (VP8X flagging ICC, Exif and XMP) with those chunks and one nobody
    /// knows, and text after its RIFF.
    static func webp(canvasWidth: Int = 640, canvasHeight: Int = 480) -> Sample {
        func vp8x(flags: UInt8) -> [UInt8] {
            webpChunk("VP8X", [flags, 0, 0, 0] + le(canvasWidth - 1, 3) + le(canvasHeight - 1, 3))
        }
        let iccp = webpChunk("ICCP", ascii("icc!!"))
        let vp8 = webpChunk("VP8 ", vp8Frame(width: canvasWidth, height: canvasHeight))
        let exifChunk = webpChunk("EXIF", ascii("Exif\0\0MM\0*GPS SN-12345"))
        let xmpChunk = webpChunk("XMP ", ascii("<x:xmpmeta xmlns:x=\"http://ns.adobe.com/xap/1.0/\"/>"))
        let unknown = webpChunk("HDLy", ascii("HuddleCam SN-12345"))
        let picture = riff(vp8x(flags: 0x2C) + iccp + vp8 + exifChunk + xmpChunk + unknown)
        return Sample(
            bytes: picture + ascii("GPS MetLife"), stripped: riff(vp8x(flags: 0x20) + iccp + vp8), pictureEnd: picture.count)
    }
}
