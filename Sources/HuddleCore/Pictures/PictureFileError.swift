/// Why the bytes of a picture file were refused (``PictureFile``), or those of a video clip
/// (``ClipFile``).
///
/// Pictures and clips come from other people's nodes, so every failure is one of these and nothing
/// in ``PictureFile`` or ``ClipFile`` traps on any input. The description is a sentence for the
/// person who sent or received the picture, not for a debugger:
///
/// ```swift
/// do {
///     let header = try PictureFile.header(of: bytes)
/// } catch {
///     print(error)   // "50000 x 50000 is too many pixels: a node shows pictures of at most 40 megapixels"
/// }
/// ```
public enum PictureFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The first bytes are not those of a JPEG, a PNG or a WebP file (from ``ClipFile``: of an MP4
    /// or a WebM clip).
    case unknownFormat
    /// The file starts like a picture but its structure is cut short or does not add up; the
    /// string says what, briefly ("a PNG chunk runs past the end of the file").
    case malformed(String)
    /// The header promises more pixels than ``PictureFile/maxPixels``: a small file that would
    /// take gigabytes to decode (a decompression bomb) is refused before anyone decodes it.
    case tooManyPixels(width: Int, height: Int, max: Int)
    /// The clip plays for longer than ``ClipFile/maxMilliseconds``, by what its header says: a
    /// node carries short clips, and refuses a long one before anyone downloads or plays it.
    case tooLong(milliseconds: Int, max: Int)

    public var description: String {
        switch self {
        case .unknownFormat:
            "not a JPEG, PNG or WebP picture"
        case .malformed(let what):
            "a damaged picture: \(what)"
        case .tooManyPixels(let width, let height, let max):
            "\(width) x \(height) is too many pixels: a node shows pictures of at most \(Self.pixels(max))"
        case .tooLong(let milliseconds, let max):
            "a clip of \(Self.seconds(milliseconds)) is too long: a node sends clips of at most \(Self.seconds(max))"
        }
    }

    /// "40 megapixels" for whole millions, else the exact count.
    private static func pixels(_ count: Int) -> String {
        count > 0 && count % 1_000_000 == 0 ? "\(count / 1_000_000) megapixels" : "\(count) pixels"
    }

    /// "30 s", "45.2 s", "30.001 s": seconds with as many decimals as the milliseconds need.
    private static func seconds(_ milliseconds: Int) -> String {
        let whole = milliseconds / 1000
        var fraction = milliseconds % 1000
        guard milliseconds >= 0, fraction != 0 else { return "\(whole) s" }
        var digits = 3
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        let text = String(fraction)
        return "\(whole).\(String(repeating: "0", count: digits - text.count))\(text) s"
    }
}
