import Testing

@testable import HuddleCore

/// Picture files built byte by byte, laden with the metadata a phone writes (a GPS position, a
/// serial number, XMP, comments, text chunks, bytes after the end): the header reads right, and
/// stripping keeps exactly the segments and chunks that showing the picture needs, byte for byte,
/// and nothing else. Truncated, random and mutated files throw or parse, never trap.
@Suite(.offThePool) struct PictureFileTests {
    @Test func headersGiveTheSize() throws {
        #expect(try PictureFile.header(of: PictureSamples.jpeg().bytes) == PictureHeader(type: .jpeg, width: 640, height: 480))
        #expect(
            try PictureFile.header(of: PictureSamples.progressiveJPEG().bytes) == PictureHeader(type: .jpeg, width: 1920, height: 1080))
        #expect(try PictureFile.header(of: PictureSamples.png().bytes) == PictureHeader(type: .png, width: 640, height: 480))
        #expect(try PictureFile.header(of: PictureSamples.webp().bytes) == PictureHeader(type: .webp, width: 640, height: 480))
        #expect(try PictureFile.header(of: PictureSamples.simpleWebP(vp8: PictureSamples.vp8Frame(width: 320, height: 240)))
            == PictureHeader(type: .webp, width: 320, height: 240))
        // VP8L: 0x2F, then width - 1 and height - 1 in 14 bits each, little-endian.
        let bits = (100 - 1) | (50 - 1) << 14
        #expect(try PictureFile.header(of: PictureSamples.simpleWebP(vp8l: [0x2F] + PictureSamples.le(bits, 4) + [0, 0, 0]))
            == PictureHeader(type: .webp, width: 100, height: 50))
    }

    @Test func typeIsByMagicBytesOnly() {
        #expect(PictureFile.type(of: [0xFF, 0xD8, 0xFF]) == .jpeg)
        #expect(PictureFile.type(of: PictureFile.pngSignature) == .png)
        #expect(PictureFile.type(of: PictureSamples.ascii("RIFF\0\0\0\0WEBP")) == .webp)
        #expect(PictureFile.type(of: PictureSamples.ascii("RIFF\0\0\0\0WAVE")) == nil)
        #expect(PictureFile.type(of: [0xFF, 0xD8]) == nil)
        #expect(PictureType.allCases.map(\.mimeType) == ["image/jpeg", "image/png", "image/webp"])
        #expect(PictureType.allCases.map(\.fileExtension) == ["jpg", "png", "webp"])
    }

    @Test func jpegKeepsOnlyWhatDecodingNeeds() throws {
        let sample = PictureSamples.jpeg()
        let stripped = try PictureFile.stripped(sample.bytes)
        #expect(stripped == sample.stripped)
        #expect(stripped.starts(with: [0xFF, 0xD8]) && stripped.suffix(2).elementsEqual([0xFF, 0xD9]))
        #expect(PictureSamples.leaks(in: stripped).isEmpty, "\(PictureSamples.leaks(in: stripped))")
        #expect(PictureSamples.leaks(in: sample.bytes).count == PictureSamples.leakMarkers.count)  // the sample carries them all
    }

    @Test func progressiveJPEGKeepsEveryScanAndItsTables() throws {
        let sample = PictureSamples.progressiveJPEG()
        let stripped = try PictureFile.stripped(sample.bytes)
        #expect(stripped == sample.stripped)
        #expect(PictureSamples.leaks(in: stripped).isEmpty, "\(PictureSamples.leaks(in: stripped))")
    }

    @Test func pngKeepsOnlyWhatDecodingNeeds() throws {
        let sample = PictureSamples.png()
        let stripped = try PictureFile.stripped(sample.bytes)
        #expect(stripped == sample.stripped)
        #expect(stripped.starts(with: PictureFile.pngSignature))
        #expect(stripped.suffix(12).elementsEqual(PictureSamples.pngChunk("IEND", [])))
        #expect(PictureSamples.leaks(in: stripped).isEmpty, "\(PictureSamples.leaks(in: stripped))")
    }

    @Test func webpKeepsOnlyWhatDecodingNeeds() throws {
        let sample = PictureSamples.webp()
        let stripped = try PictureFile.stripped(sample.bytes)
        #expect(stripped == sample.stripped)
        #expect(stripped[20] == 0x20)  // VP8X flags: the ICC profile's stays, Exif's and XMP's go
        #expect(stripped.littleEndian32(at: 4) == stripped.count - 8)
        #expect(PictureSamples.leaks(in: stripped).isEmpty, "\(PictureSamples.leaks(in: stripped))")
    }

    @Test func strippingTwiceIsStrippingOnce() throws {
        for sample in PictureSamples.all {
            let once = try PictureFile.stripped(sample.bytes)
            #expect(try PictureFile.stripped(once) == once)
            #expect(try PictureFile.header(of: once) == PictureFile.header(of: sample.bytes))
        }
    }

    @Test func tooManyPixelsIsRefusedFromTheHeader() throws {
        let max = PictureFile.maxPixels
        #expect(throws: PictureFileError.tooManyPixels(width: 50_000, height: 50_000, max: max)) {
            try PictureFile.header(of: PictureSamples.pngHeader(width: 50_000, height: 50_000))
        }
        #expect(throws: PictureFileError.tooManyPixels(width: 0x7FFF_FFFF, height: 0x7FFF_FFFF, max: max)) {
            try PictureFile.header(of: PictureSamples.pngHeader(width: 0x7FFF_FFFF, height: 0x7FFF_FFFF))
        }
        #expect(throws: PictureFileError.tooManyPixels(width: 65_535, height: 65_535, max: max)) {
            try PictureFile.header(of: PictureSamples.jpeg(width: 65_535, height: 65_535).bytes)
        }
        #expect(throws: PictureFileError.tooManyPixels(width: 1 << 24, height: 1 << 24, max: max)) {
            try PictureFile.header(of: PictureSamples.webp(canvasWidth: 1 << 24, canvasHeight: 1 << 24).bytes)
        }
        #expect(try PictureFile.header(of: PictureSamples.pngHeader(width: 8_000, height: 5_000)).width == 8_000)
        #expect(throws: PictureFileError.self) { try PictureFile.header(of: PictureSamples.pngHeader(width: 8_000, height: 5_001)) }
        let error = PictureFileError.tooManyPixels(width: 50_000, height: 50_000, max: max)
        #expect(error.description == "50000 x 50000 is too many pixels: a node shows pictures of at most 40 megapixels")
    }

    @Test func zeroOrOversizedDimensionsAreMalformed() {
        for bytes in [
            PictureSamples.jpeg(width: 640, height: 0).bytes, PictureSamples.pngHeader(width: 0, height: 480),
            PictureSamples.pngHeader(width: 0x8000_0000, height: 1), PictureSamples.simpleWebP(vp8: PictureSamples.vp8Frame(width: 0, height: 240)),
        ] {
            #expect(PictureSamples.isMalformed { try PictureFile.header(of: bytes) })
        }
    }

    @Test func unknownBytesAreUnknownFormat() {
        let notPictures: [[UInt8]] = [
            [], [0xFF], PictureSamples.ascii("GIF89a and more"), PictureSamples.ascii("RIFF\u{4}\0\0\0WAVE"), PictureSamples.ascii("plain text"),
        ]
        for bytes in notPictures {
            #expect(PictureFile.type(of: bytes) == nil)
            #expect(throws: PictureFileError.unknownFormat) { try PictureFile.header(of: bytes) }
            #expect(throws: PictureFileError.unknownFormat) { try PictureFile.stripped(bytes) }
        }
        #expect(PictureFileError.unknownFormat.description == "not a JPEG, PNG or WebP picture")
    }

    @Test func lengthsPastTheEndAreMalformed() {
        let soi: [UInt8] = [0xFF, 0xD8]
        let cases: [[UInt8]] = [
            soi + [0xFF, 0xE1, 0xFF, 0xFF] + PictureSamples.ascii("Exif\0\0"),  // APP1 longer than the file
            soi + [0xFF, 0xE1, 0x00, 0x01] + PictureSamples.jpeg().bytes.dropFirst(2),  // length below 2
            soi + [0xFF, 0xFE, 0x00, 0x02, 0x41],  // a COM, then a byte that is no marker
            Array(PictureSamples.jpeg().bytes.prefix(PictureSamples.jpeg().pictureEnd - 2)),  // no EOI
            PictureFile.pngSignature + PictureSamples.be(0x7FFF_FFF0, 4) + PictureSamples.ascii("IHDR") + [UInt8](repeating: 0, count: 17),
            PictureFile.pngSignature + PictureSamples.pngChunk("tEXt", PictureSamples.ascii("GPS")),  // IHDR not first
            PictureSamples.ascii("RIFF") + PictureSamples.le(0xFFFF_FFF0, 4) + PictureSamples.ascii("WEBP"),
            PictureSamples.ascii("RIFF") + PictureSamples.le(16, 4) + PictureSamples.ascii("WEBPVP8X") + PictureSamples.le(100, 4) + [0, 0, 0, 0],
            PictureSamples.ascii("RIFF") + PictureSamples.le(13, 4) + PictureSamples.ascii("WEBPEXIF") + PictureSamples.le(1, 4) + [0],  // no pad
        ]
        for bytes in cases {
            #expect(PictureSamples.isMalformed { try PictureFile.stripped(bytes) }, "\(bytes)")
        }
    }

    /// Every prefix cut before the end of the picture throws; one that keeps the end of it (and
    /// some of what follows) strips to the same bytes as the whole file.
    @Test func everyPrefixThrowsOrStripsTheSame() throws {
        for sample in PictureSamples.all {
            let whole = try PictureFile.stripped(sample.bytes)
            for length in 0..<sample.bytes.count {
                let prefix = Array(sample.bytes.prefix(length))
                _ = try? PictureFile.header(of: prefix)
                if length < sample.pictureEnd {
                    #expect(throws: PictureFileError.self) { try PictureFile.stripped(prefix) }
                } else {
                    #expect(try PictureFile.stripped(prefix) == whole)
                }
            }
        }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func randomBytesNeverTrap(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let magics: [[UInt8]] = [
            [], [0xFF, 0xD8, 0xFF], PictureFile.pngSignature, PictureSamples.ascii("RIFF") + PictureSamples.le(40, 4) + PictureSamples.ascii("WEBP"),
        ]
        for _ in 0..<2_000 {
            let magic = magics[Int.random(in: 0..<magics.count, using: &random)]
            let count = Int.random(in: 0..<200, using: &random)
            let bytes = magic + (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            Self.checkNoTrap(bytes)
        }
    }

    /// Valid samples with a few bytes changed, dropped or added: parse or throw, and whatever
    /// strips, strips again to itself and keeps its size.
    @Test(arguments: [UInt64(11), 12, 13])
    func mutatedSamplesNeverTrap(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var stripped = 0
        for sample in PictureSamples.all {
            for _ in 0..<1_000 {
                var bytes = sample.bytes
                for _ in 0..<Int.random(in: 1...4, using: &random) where !bytes.isEmpty {
                    let index = Int.random(in: 0..<bytes.count, using: &random)
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0: bytes.remove(at: index)
                    case 1: bytes.insert(UInt8.random(in: 0...255, using: &random), at: index)
                    case 2: bytes[index] = [0x00, 0xFF, 0x7F, 0x80][Int.random(in: 0..<4, using: &random)]
                    default: bytes[index] = UInt8.random(in: 0...255, using: &random)
                    }
                }
                if Self.checkNoTrap(bytes) { stripped += 1 }
            }
        }
        #expect(stripped > 500)  // the mutations reach past the first checks
    }

    /// Runs both parsers on `bytes`; when stripping works, checks it is idempotent and keeps the
    /// header. Returns whether stripping worked.
    @discardableResult
    static func checkNoTrap(_ bytes: [UInt8]) -> Bool {
        let header = try? PictureFile.header(of: bytes)
        guard let once = try? PictureFile.stripped(bytes) else { return false }
        #expect((try? PictureFile.stripped(once)) == once, "\(bytes)")
        if let header { #expect((try? PictureFile.header(of: once)) == header, "\(bytes)") }
        return true
    }
}

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
