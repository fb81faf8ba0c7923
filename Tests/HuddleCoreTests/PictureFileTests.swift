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
