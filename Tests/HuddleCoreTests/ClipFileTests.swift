import Testing

@testable import HuddleCore

/// Clip files built byte by byte (``ClipSamples``), laden with what phones and recorders write:
/// the header reads the duration and size; stripping keeps the file's length and every byte of
/// media at its offset, and leaves none of the location, camera, date, title, XMP or GPS tag.
/// Truncated, random and mutated files throw or parse, never trap.
@Suite(.offThePool) struct ClipFileTests {
    @Test func headersGiveDurationAndSize() throws {
        for sample in ClipSamples.all {
            #expect(try ClipFile.header(of: sample.bytes) == sample.header, "\(sample.name)")
        }
        #expect(try ClipFile.header(of: ClipSamples.mp4(timescale: 600, ticks: 7_487)).milliseconds == 12_478)  // 12.4783 s
        #expect(try ClipFile.header(of: ClipSamples.mp4(timescale: 44_100, ticks: 44_122, version: 1)).milliseconds == 1_000)
        #expect(try ClipFile.header(of: ClipSamples.webm(milliseconds: 29_999.6)).milliseconds == 30_000)
    }

    /// A quarter turn in the track's matrix swaps width and height; a matrix of zeros, which
    /// some writers leave, turns nothing.
    @Test func aTurnedTrackGivesTheSizeAsShown() throws {
        let turned = try ClipFile.header(of: ClipSamples.mp4(timescale: 1000, ticks: 3000, matrix: ClipSamples.quarterTurn))
        #expect((turned.width, turned.height) == (360, 640))
        let zeros = try ClipFile.header(of: ClipSamples.mp4(timescale: 1000, ticks: 3000, matrix: ClipSamples.zeros(36)))
        #expect((zeros.width, zeros.height) == (640, 360))
    }

    @Test func typeIsByTheFirstBoxOrTheDocType() {
        let ftyp = { (brands: String) in ClipSamples.box("ftyp", ClipSamples.ascii(brands)) }
        #expect(ClipFile.type(of: ftyp("qt  \0\0\u{2}\0qt  ")) == .mp4)  // an iPhone's .mov
        #expect(ClipFile.type(of: ftyp("XAVC\0\0\0\0XAVCmp42iso2")) == .mp4)  // a compatible brand will do
        #expect(ClipFile.type(of: ftyp("heic\0\0\0\0mif1heic")) == nil)  // a HEIF picture
        #expect(ClipFile.type(of: ftyp("avif\0\0\0\0avifmif1miafMA1B")) == nil)
        #expect(ClipFile.type(of: Array(ftyp("isom\0\0\0\0isom").dropLast())) == nil)  // ftyp cut short
        #expect(ClipFile.type(of: ClipSamples.ebmlHeader()) == .webm)
        #expect(ClipFile.type(of: ClipSamples.ebmlHeader(docType: "webm\0\0")) == .webm)
        #expect(ClipFile.type(of: ClipSamples.ebmlHeader(docType: "matroska")) == nil)
        #expect(ClipFile.type(of: Array(ClipSamples.ebmlHeader().dropLast())) == nil)
        for bytes in [[], [0x1A, 0x45, 0xDF, 0xA3], PictureSamples.jpeg().bytes, PictureSamples.ascii("....ftypisom")] {
            #expect(ClipFile.type(of: bytes) == nil)
            #expect(throws: PictureFileError.unknownFormat) { try ClipFile.header(of: bytes) }
            #expect(throws: PictureFileError.unknownFormat) { try ClipFile.stripped(bytes) }
        }
        #expect(ClipType.allCases.map(\.rawValue) == [4, 5])
        #expect(ClipType.allCases.map(\.mimeType) == ["video/mp4", "video/webm"])
        #expect(ClipType.allCases.map(\.fileExtension) == ["mp4", "webm"])
    }

    /// The same length, the media at the same offsets, no marker left, and the header as before.
    @Test func strippingNeutralizesInPlace() throws {
        for sample in ClipSamples.all {
            #expect(ClipSamples.leaks(in: sample.bytes) == sample.markers, "\(sample.name)")  // the sample carries them
            let stripped = try ClipFile.stripped(sample.bytes)
            #expect(stripped.count == sample.end, "\(sample.name)")
            #expect(stripped[sample.media] == sample.bytes[sample.media], "\(sample.name)")
            #expect(ClipSamples.leaks(in: stripped).isEmpty, "\(sample.name): \(ClipSamples.leaks(in: stripped))")
            #expect(try ClipFile.header(of: stripped) == sample.header, "\(sample.name)")
            #expect(try ClipFile.stripped(stripped) == stripped, "\(sample.name)")
        }
    }

    /// Every box keeps its offset and size; udta, meta, uuid and the boxes of no use become
    /// free and zero; the chunk offset still points at the media.
    @Test func mp4BoxesKeepTheirPlaces() throws {
        let sample = ClipSamples.mp4()
        let stripped = try ClipFile.stripped(sample.bytes)
        let before = try ClipFile.mp4Boxes(in: sample.bytes, 0..<sample.bytes.count)
        let after = try ClipFile.mp4Boxes(in: stripped, 0..<stripped.count)
        #expect(before.map(\.whole) == after.map(\.whole))
        #expect(after.map { ClipSamples.name($0.type) } == ["ftyp", "free", "mdat", "moov", "free", "free"])
        for box in after where box.type == ClipFile.box("free") {
            #expect(stripped[box.payload].allSatisfy { $0 == 0 })
        }
        let moov = try ClipFile.mp4Boxes(in: stripped, after[3].payload)
        #expect(moov.map { ClipSamples.name($0.type) } == ["mvhd", "trak", "trak", "free", "free"])
        let mvhd = moov[0].payload
        #expect(stripped[mvhd.lowerBound + 4..<mvhd.lowerBound + 12].allSatisfy { $0 == 0 })  // creation, modification
        #expect(stripped[mvhd.lowerBound + 12..<mvhd.lowerBound + 20] == sample.bytes[mvhd.lowerBound + 12..<mvhd.lowerBound + 20])
        let offset = sample.media.lowerBound
        let stco = ClipSamples.ascii("stco") + ClipSamples.zeros(4) + ClipSamples.be(1, 4) + ClipSamples.be(offset, 4)
        #expect(PictureSamples.contains(stripped, stco))
        #expect(stripped[offset..<offset + 5].elementsEqual(ClipSamples.ascii("MEDIA")))
    }

    /// Tags, Attachments and old Voids become Voids of their length; Info keeps its scale and
    /// duration; the SeekHead keeps its entries but those for Tags and Attachments.
    @Test func webmElementsKeepTheirPlaces() throws {
        let sample = ClipSamples.webm()
        let stripped = try ClipFile.stripped(sample.bytes)
        let before = try ClipFile.webmLayout(sample.bytes).elements
        let after = try ClipFile.webmLayout(stripped).elements
        #expect(before.map(\.whole) == after.map(\.whole))
        #expect(after.map(\.id) == [0x114D_9B74, 0xEC, 0x1549_A966, 0x1654_AE6B, 0xEC, 0xEC, 0x1F43_B675, 0x1C53_BB6B, 0xEC])
        let info = try ClipFile.ebmlChildren(in: stripped, after[2].data)
        #expect(info.map(\.id) == [0x2A_D7B1, 0x4489, 0xEC, 0xEC, 0xEC, 0xEC])
        let seeks = try ClipFile.ebmlChildren(in: stripped, after[0].data)
        #expect(seeks.map(\.id) == [0x4DBB, 0x4DBB, 0xEC, 0xEC, 0x4DBB, 0x4DBB, 0xEC])
        for void in (after + info + seeks) where void.id == 0xEC {
            #expect(stripped[void.data].allSatisfy { $0 == 0 })
        }
        #expect(stripped[after[3].whole] == sample.bytes[after[3].whole])  // Tracks as they were
    }

    @Test func tooLongIsRefusedFromTheHeader() throws {
        let max = ClipFile.maxMilliseconds
        #expect(try ClipFile.header(of: ClipSamples.mp4(timescale: 1000, ticks: 30_000)).milliseconds == max)
        #expect(throws: PictureFileError.tooLong(milliseconds: 30_001, max: max)) {
            try ClipFile.header(of: ClipSamples.mp4(timescale: 1000, ticks: 30_001))
        }
        #expect(throws: PictureFileError.tooLong(milliseconds: 3_600_000, max: max)) {
            try ClipFile.header(of: ClipSamples.mp4(timescale: 90_000, ticks: 324_000_000, version: 1))
        }
        #expect(throws: PictureFileError.tooLong(milliseconds: .max, max: max)) {
            try ClipFile.header(of: ClipSamples.mp4(timescale: 1, ticks: Int.max - 1, version: 1))
        }
        #expect(throws: PictureFileError.tooLong(milliseconds: 45_200, max: max)) {
            try ClipFile.header(of: ClipSamples.webm(milliseconds: 45_200))
        }
        #expect(throws: PictureFileError.tooLong(milliseconds: .max, max: max)) {
            try ClipFile.header(of: ClipSamples.webm(milliseconds: 1e300))
        }
        // Stripping does not look at the duration.
        #expect(try ClipFile.stripped(ClipSamples.webm(milliseconds: 45_200)).count == ClipSamples.webm(milliseconds: 45_200).count)
        #expect(
            PictureFileError.tooLong(milliseconds: 45_200, max: max).description
                == "a clip of 45.2 s is too long: a node sends clips of at most 30 s")
        #expect(PictureFileError.tooLong(milliseconds: 30_001, max: max).description.hasPrefix("a clip of 30.001 s"))
    }

    @Test func headersThatDoNotAddUpAreMalformed() {
        let mp4 = ClipSamples.mp4().bytes
        let noVideo = ClipSamples.box("ftyp", ClipSamples.ascii("isom\0\0\0\0"))
            + ClipSamples.box("moov", ClipSamples.mvhd(version: 0, timescale: 1000, duration: 3000) + ClipSamples.audioTrack)
        let cases: [[UInt8]] = [
            ClipSamples.mp4(timescale: 0, ticks: 3000),  // no timescale
            ClipSamples.mp4(timescale: 1000, ticks: 0),  // no duration
            ClipSamples.mp4(timescale: 1000, ticks: 0xFFFF_FFFF),  // "unknown"
            ClipSamples.mp4(timescale: 1000, ticks: -1, version: 1),
            noVideo,
            mp4 + [0, 0, 0],  // a box header cut short
            mp4 + ClipSamples.be(1, 4) + ClipSamples.ascii("free") + ClipSamples.be(100, 8),  // 64-bit size past the end
            mp4 + ClipSamples.be(4, 4) + ClipSamples.ascii("free"),  // size below 8
            ClipSamples.liveWebM(duration: nil).bytes,  // a browser's recording: no Duration
            ClipSamples.webm(milliseconds: .nan), ClipSamples.webm(milliseconds: -1), ClipSamples.webm(milliseconds: 0),
            ClipSamples.ebmlHeader() + ClipSamples.id(0x1853_8067) + ClipSamples.unknownSize + ClipSamples.id(0x1549_A966)
                + ClipSamples.unknownSize,  // an Info of unknown size
            ClipSamples.ebmlHeader() + ClipSamples.element(0x1853_8067, ClipSamples.tracks),  // no Info
            ClipSamples.ebmlHeader() + [0x00, 0x81, 0x00],  // an ID whose first byte is 0
            ClipSamples.ebmlHeader() + ClipSamples.element(0x1654_AE6B, []),  // Tracks where the Segment should be
        ]
        for bytes in cases {
            #expect(PictureSamples.isMalformed { try ClipFile.header(of: bytes) }, "\(bytes.suffix(24))")
        }
    }

    /// A Void of each length from 2 up reads back as one element of exactly that length.
    @Test func voidsAreExactlyAsLongAsWhatTheyReplace() throws {
        // Every length where the size field is one byte wide and where it widens to two, to
        // three and to four (128/129, 16385/16386, 2^21+2/2^21+3), and a stride between them.
        let widths = [Array(2...300), Array(16_370...16_400), Array((1 << 21) + 1...(1 << 21) + 4)]
        for length in widths.joined() + Array(stride(from: 301, to: 16_370, by: 97)) {
            var bytes = [UInt8](repeating: 0x55, count: length)
            ClipFile.writeVoid(&bytes, over: 0..<length)
            let void = try ClipFile.ebmlElement(in: bytes, at: 0, end: length)
            #expect(void.id == 0xEC && void.whole == 0..<length && !void.sizeIsUnknown, "\(length)")
            #expect(bytes[void.data].allSatisfy { $0 == 0 }, "\(length)")
        }
    }

    /// Bytes after a WebM's Segment of known size are no part of it and go; an MP4's must be boxes.
    @Test func bytesAfterTheClip() throws {
        let webm = ClipSamples.webm()
        #expect(try ClipFile.stripped(webm.bytes + ClipSamples.ascii("GPS HuddleCam")) == ClipFile.stripped(webm.bytes))
        #expect(PictureSamples.isMalformed { try ClipFile.stripped(ClipSamples.mp4().bytes + ClipSamples.ascii("GPS")) })
    }

    /// A hundred thousand boxes nested in one another are not followed down: no deep recursion.
    @Test func deepNestingIsNotFollowed() {
        let depth = 100_000
        let traks = (0..<depth).flatMap { ClipSamples.be(8 * (depth - $0) + 8, 4) + ClipSamples.ascii("trak") }
        let bytes = ClipSamples.box("ftyp", ClipSamples.ascii("isom\0\0\0\0"))
            + ClipSamples.box("moov", traks + ClipSamples.box("mdia", []))
        #expect(throws: PictureFileError.self) { try ClipFile.header(of: bytes) }
        #expect((try? ClipFile.stripped(bytes))?.count == bytes.count)
    }

    /// Every prefix throws, or strips to a clip of its own length that strips to itself, with
    /// whatever media it holds untouched.
    @Test func everyPrefixThrowsOrStripsInPlace() throws {
        for sample in ClipSamples.all {
            var stripped = 0
            for length in 0..<sample.bytes.count {
                let prefix = Array(sample.bytes.prefix(length))
                _ = try? ClipFile.header(of: prefix)
                guard let once = try? ClipFile.stripped(prefix) else { continue }
                stripped += 1
                #expect(once.count == length, "\(sample.name) \(length)")
                let media = sample.media.clamped(to: 0..<length)
                #expect(once[media] == prefix[media], "\(sample.name) \(length)")
                #expect((try? ClipFile.stripped(once)) == once, "\(sample.name) \(length)")
            }
            if sample.name.hasPrefix("webm") { #expect(stripped == 0, "\(sample.name)") }  // the Segment's size is known
        }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func randomBytesNeverTrap(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let starts: [[UInt8]] = [
            [], ClipSamples.box("ftyp", ClipSamples.ascii("isom\0\0\0\0")), ClipSamples.ebmlHeader(),
            ClipSamples.ebmlHeader() + ClipSamples.id(0x1853_8067) + ClipSamples.unknownSize,
        ]
        for _ in 0..<2_000 {
            let start = starts[Int.random(in: 0..<starts.count, using: &random)]
            let bytes = start + (0..<Int.random(in: 0..<200, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            Self.checkNoTrap(bytes)
        }
    }

    /// Valid samples with a few bytes changed, dropped or added: parse or throw, and whatever
    /// strips keeps its length and strips again to itself.
    @Test(arguments: [UInt64(11), 12, 13])
    func mutatedSamplesNeverTrap(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var stripped = 0
        for sample in ClipSamples.all {
            for _ in 0..<500 {
                var bytes = sample.bytes
                for _ in 0..<Int.random(in: 1...4, using: &random) where !bytes.isEmpty {
                    let index = Int.random(in: 0..<bytes.count, using: &random)
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0: bytes.remove(at: index)
                    case 1: bytes.insert(UInt8.random(in: 0...255, using: &random), at: index)
                    case 2: bytes[index] = [0x00, 0xFF, 0x7F, 0x80, 0x01][Int.random(in: 0..<5, using: &random)]
                    default: bytes[index] = UInt8.random(in: 0...255, using: &random)
                    }
                }
                if Self.checkNoTrap(bytes) { stripped += 1 }
            }
        }
        #expect(stripped > 1_000)  // the mutations reach past the first checks
    }

    /// Runs both parsers on `bytes`; when stripping works, checks it keeps the length (or drops
    /// only what follows a WebM's Segment), is idempotent and keeps the header.
    @discardableResult
    static func checkNoTrap(_ bytes: [UInt8]) -> Bool {
        let header = try? ClipFile.header(of: bytes)
        guard let once = try? ClipFile.stripped(bytes) else { return false }
        #expect(once.count == bytes.count || (ClipFile.type(of: bytes) == .webm && once.count < bytes.count), "\(bytes)")
        #expect((try? ClipFile.stripped(once)) == once, "\(bytes)")
        if let header { #expect((try? ClipFile.header(of: once)) == header, "\(bytes)") }
        return true
    }
}
