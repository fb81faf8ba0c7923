/// A picture's kind as a message carries it: a still (``PictureType``) or a short clip
/// (``ClipType``). The raw value is the one byte the wire carries (1–3 stills, 4–5 clips).
public enum MediaType: Sendable, Hashable, CaseIterable {
    case still(PictureType)
    case clip(ClipType)

    public static var allCases: [MediaType] { PictureType.allCases.map(still) + ClipType.allCases.map(clip) }

    public init?(rawValue: UInt8) {
        if let still = PictureType(rawValue: rawValue) {
            self = .still(still)
        } else if let clip = ClipType(rawValue: rawValue) {
            self = .clip(clip)
        } else {
            return nil
        }
    }

    public var rawValue: UInt8 {
        switch self {
        case .still(let type): type.rawValue
        case .clip(let type): type.rawValue
        }
    }

    public var mimeType: String {
        switch self {
        case .still(let type): type.mimeType
        case .clip(let type): type.mimeType
        }
    }

    public var fileExtension: String {
        switch self {
        case .still(let type): type.fileExtension
        case .clip(let type): type.fileExtension
        }
    }

    public var isClip: Bool {
        if case .clip = self { true } else { false }
    }
}

/// What a picture's file says of itself, a still's or a clip's: what a message names it by.
public struct MediaHeader: Hashable, Sendable {
    public var type: MediaType
    public var width: Int
    public var height: Int
    /// How long a clip plays; 0 for a still.
    public var milliseconds: Int
}

/// A still or a clip, told apart by its first bytes: the one door `/photo`, `/clip` and a page's
/// upload go through, and what a node checks a peer's picture against once it opens it.
public enum MediaFile {
    /// Its header: a still's size, a clip's size and length (over 30 s throws ``PictureFileError/tooLong(milliseconds:max:)``).
    public static func header(of bytes: [UInt8]) throws(PictureFileError) -> MediaHeader {
        if ClipFile.type(of: bytes) != nil {
            let clip = try ClipFile.header(of: bytes)
            return MediaHeader(type: .clip(clip.type), width: clip.width, height: clip.height, milliseconds: clip.milliseconds)
        }
        let still = try PictureFile.header(of: bytes)
        return MediaHeader(type: .still(still.type), width: still.width, height: still.height, milliseconds: 0)
    }

    /// The same file with what says where, when and with what it was taken removed: a still's
    /// metadata segments and chunks, a clip's metadata boxes and elements neutralized in place.
    public static func stripped(_ bytes: [UInt8]) throws(PictureFileError) -> [UInt8] {
        ClipFile.type(of: bytes) != nil ? try ClipFile.stripped(bytes) : try PictureFile.stripped(bytes)
    }
}
