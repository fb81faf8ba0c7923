/// Reads short video clips without decoding them: which format, how long, how many pixels, and
/// the same file without what the phone wrote about where, when and with what it was recorded.
///
/// A clip from a phone carries the place it was shot (Apple's ISO 6709 location, a 3GPP `loci`
/// box), the date to the second, the make and model of the camera, and often the app that wrote
/// it; sent to a room, all of that would go to every member. ``stripped(_:)`` removes it.
///
/// Unlike ``PictureFile``, which copies the segments it keeps into a shorter file, a clip is
/// neutralized in place: same length, every byte of media at the same offset. An MP4's sample
/// tables (`stco`, `co64`) and a WebM's `SeekHead` and `Cues` hold absolute positions in the file,
/// so removing a single byte before the media would make every one of them wrong; turning a
/// metadata box into padding of the same size (MP4 `free`, WebM `Void`) keeps them all right, and
/// still needs no decoder in the core.
///
/// ``header(of:)`` reads the duration and size from the header alone, so a node can refuse a
/// clip longer than ``maxMilliseconds`` before anyone downloads or plays it.
///
/// Everything is bounds-checked byte parsing of untrusted input: any input either parses or
/// throws a ``PictureFileError``, never traps.
///
/// ```swift
/// let header = try ClipFile.header(of: bytes)     // .mp4, 12480 ms, 1080 x 1920
/// let clean = try ClipFile.stripped(bytes)        // no location, no dates, no camera; same length
/// ```
public enum ClipFile {
    /// Longest clip a node accepts: 30 seconds, in milliseconds.
    ///
    /// Clips are sent as they are, so their length is what bounds what they cost: 30 s of a
    /// phone's video fits the 16 MiB a node carries at an ordinary bitrate, and a clip is a
    /// moment of the game, not the game.
    public static let maxMilliseconds = 30_000

    static let ebmlMagic: [UInt8] = [0x1A, 0x45, 0xDF, 0xA3]

    /// The format the first bytes announce: an MP4 starts with an `ftyp` box naming a brand of
    /// video file (``mp4Brands``), a WebM with an EBML header whose DocType is "webm". Nothing
    /// past that header is checked.
    public static func type(of bytes: [UInt8]) -> ClipType? {
        if isMP4(bytes) { return .mp4 }
        if bytes.hasBytes(ebmlMagic, at: 0), isWebM(bytes) { return .webm }
        return nil
    }

    /// Duration and size from the header alone, never decoding a frame: an MP4's movie header
    /// (`mvhd`) and its first video track (`tkhd`, or the sample description), a WebM's `Info`
    /// and its first video `TrackEntry`.
    ///
    /// Throws ``PictureFileError/tooLong(milliseconds:max:)`` for a clip longer than
    /// ``maxMilliseconds``, ``PictureFileError/malformed(_:)`` on a structure that runs past
    /// the end or does not add up, a clip that does not say how long it is, a duration, width or
    /// height of 0, or no video track, and ``PictureFileError/unknownFormat`` when the bytes are
    /// neither format.
    public static func header(of bytes: [UInt8]) throws(PictureFileError) -> ClipHeader {
        guard let type = type(of: bytes) else { throw .unknownFormat }
        let header: ClipHeader
        switch type {
        case .mp4: header = try mp4Header(bytes)
        case .webm: header = try webmHeader(bytes)
        }
        guard header.milliseconds > 0 else { throw .malformed("the clip gives a duration of 0") }
        guard header.width > 0, header.height > 0 else {
            throw .malformed("the clip's video track gives a width or height of 0")
        }
        guard header.milliseconds <= maxMilliseconds else {
            throw .tooLong(milliseconds: header.milliseconds, max: maxMilliseconds)
        }
        return header
    }

    /// The same clip, the same length, with every piece of metadata that can say where, when or
    /// with what it was recorded overwritten by padding, and every byte of media where it was
    /// (bytes after a WebM's Segment, no part of the clip, go, as they do after a picture).
    ///
    /// What goes, per format: see ``strippedMP4(_:)`` and ``strippedWebM(_:)``. Validates the
    /// structure it walks, throwing ``PictureFileError/malformed(_:)`` on a box or element whose
    /// size runs past the end. Does not check the duration (``header(of:)`` does). Stripping a
    /// stripped clip gives the same bytes.
    public static func stripped(_ bytes: [UInt8]) throws(PictureFileError) -> [UInt8] {
        switch type(of: bytes) {
        case .mp4: try strippedMP4(bytes)
        case .webm: try strippedWebM(bytes)
        case nil: throw .unknownFormat
        }
    }
}
