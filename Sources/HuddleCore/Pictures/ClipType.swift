/// The video clip formats a node sends and shows, as they are (no transcoding).
///
/// Two, because a phone's camera records MP4 (or QuickTime, its close cousin, which the same
/// parser reads), a browser's recorder writes WebM, and every browser that opens the phone's page
/// plays both. The raw values follow ``PictureType``'s (1 to 3) and travel on the wire in a
/// message's event beside them: never renumber them.
public enum ClipType: UInt8, Sendable, Hashable, CaseIterable {
    case mp4 = 4
    case webm = 5

    /// The media type a page is served the bytes as.
    public var mimeType: String {
        switch self {
        case .mp4: "video/mp4"
        case .webm: "video/webm"
        }
    }

    /// What a saved copy's file name ends in, without the dot.
    public var fileExtension: String {
        switch self {
        case .mp4: "mp4"
        case .webm: "webm"
        }
    }
}

/// What a clip file's header says: its format, how long it plays and the size of its picture,
/// read without decoding a frame (``ClipFile/header(of:)``).
///
/// ```swift
/// ClipHeader(type: .mp4, milliseconds: 12_480, width: 1080, height: 1920)   // a portrait phone clip
/// ```
public struct ClipHeader: Hashable, Sendable {
    public var type: ClipType
    /// How long the clip plays, rounded to the nearest millisecond: at least 1, at most
    /// ``ClipFile/maxMilliseconds``.
    public var milliseconds: Int
    /// Width and height in pixels of the first video track as shown (an MP4 recorded in portrait
    /// and turned by its track's matrix gives the turned size), each at least 1.
    public var width: Int
    public var height: Int

    public init(type: ClipType, milliseconds: Int, width: Int, height: Int) {
        self.type = type
        self.milliseconds = milliseconds
        self.width = width
        self.height = height
    }
}
