/// Reads picture files without decoding them: which format, how many pixels, and the same file
/// without what the camera wrote about where, when and with what it was taken.
///
/// A photo of the TV from a phone carries the phone's GPS position, the time to the second, the
/// make, model and often serial number of the camera; sent to a room, all of that would go to
/// every member. ``stripped(_:)`` keeps only what showing the picture needs and drops the rest by
/// whitelist, so metadata nobody has thought of goes too. It copies the bytes that remain as they
/// are: no re-encoding, so no loss and no image library in the core.
///
/// ``header(of:)`` reads the size from the header alone so a node can refuse a picture that would
/// take gigabytes to decode (``maxPixels``) before anything decodes it.
///
/// Everything is bounds-checked byte parsing of untrusted input: any input either parses or
/// throws a ``PictureFileError``, never traps.
///
/// ```swift
/// let header = try PictureFile.header(of: bytes)     // .jpeg, 4032 x 3024
/// let clean = try PictureFile.stripped(bytes)        // no Exif, no XMP, no comment
/// ```
public enum PictureFile {
    /// Most pixels a node accepts in one picture (decompression bombs): 40 megapixels.
    ///
    /// Decoded at 4 bytes a pixel that is 160 MB already; a phone's ordinary photo is 12 to 24
    /// megapixels, so every real photo of the TV fits with room to spare.
    public static let maxPixels = 40_000_000

    static let jpegMagic: [UInt8] = [0xFF, 0xD8, 0xFF]
    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    static let riffMagic = Array("RIFF".utf8)
    static let webpMagic = Array("WEBP".utf8)

    /// The format the first bytes announce, by magic bytes only (nothing further is checked).
    public static func type(of bytes: [UInt8]) -> PictureType? {
        if bytes.hasBytes(jpegMagic, at: 0) { return .jpeg }
        if bytes.hasBytes(pngSignature, at: 0) { return .png }
        if bytes.hasBytes(riffMagic, at: 0), bytes.hasBytes(webpMagic, at: 8) { return .webp }
        return nil
    }

    /// Width and height from the header alone (JPEG SOFn markers incl. progressive SOF2; PNG
    /// IHDR; WebP VP8 / VP8L / VP8X), never decoding pixels.
    ///
    /// Throws ``PictureFileError/tooManyPixels(width:height:max:)`` if width × height exceeds
    /// ``maxPixels`` (computed without overflow), ``PictureFileError/malformed(_:)`` on a zero
    /// width or height or a header that runs past the end, and
    /// ``PictureFileError/unknownFormat`` when the bytes are none of the three formats.
    public static func header(of bytes: [UInt8]) throws(PictureFileError) -> PictureHeader {
        guard let type = type(of: bytes) else { throw .unknownFormat }
        let size: (width: Int, height: Int)
        switch type {
        case .jpeg: size = try jpegSize(bytes)
        case .png: size = try pngSize(bytes)
        case .webp: size = try webpSize(bytes)
        }
        guard size.width > 0, size.height > 0 else {
            throw .malformed("the header gives a width or height of 0")
        }
        let (pixels, overflow) = size.width.multipliedReportingOverflow(by: size.height)
        guard !overflow, pixels <= maxPixels else {
            throw .tooManyPixels(width: size.width, height: size.height, max: maxPixels)
        }
        return PictureHeader(type: type, width: size.width, height: size.height)
    }

    /// The same picture with every piece of metadata that can say where, when or with what it was
    /// taken removed, pixels untouched (no re-encode).
    ///
    /// What stays, per format, is a whitelist: see ``strippedJPEG(_:)``, ``strippedPNG(_:)`` and
    /// ``strippedWebP(_:)``. Bytes after the end of the picture (after a JPEG's EOI, a PNG's
    /// IEND, past a WebP's RIFF size) go too: files are known to hide things there. Validates the
    /// structure as it goes, throwing ``PictureFileError/malformed(_:)`` on a segment or chunk
    /// whose length runs past the end or a picture that ends early. Stripping a stripped picture
    /// gives the same bytes.
    public static func stripped(_ bytes: [UInt8]) throws(PictureFileError) -> [UInt8] {
        switch type(of: bytes) {
        case .jpeg: try strippedJPEG(bytes)
        case .png: try strippedPNG(bytes)
        case .webp: try strippedWebP(bytes)
        case nil: throw .unknownFormat
        }
    }
}
