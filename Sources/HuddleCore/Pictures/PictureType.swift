/// The still-picture formats a node sends and shows.
///
/// Three, because every browser that opens the phone's page shows all three, and a phone's camera
/// or a screenshot writes one of them. The raw values travel on the wire in a picture's event:
/// never renumber them.
public enum PictureType: UInt8, Sendable, Hashable, CaseIterable {
    case jpeg = 1
    case png = 2
    case webp = 3

    /// The media type a page is served the bytes as.
    public var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        }
    }

    /// What a saved copy's file name ends in, without the dot.
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .png: "png"
        case .webp: "webp"
        }
    }
}

/// What a picture file's header says: its format and its size in pixels, read without decoding a
/// pixel (``PictureFile/header(of:)``).
public struct PictureHeader: Hashable, Sendable {
    public var type: PictureType
    /// Width and height in pixels, each at least 1.
    public var width: Int
    public var height: Int

    public init(type: PictureType, width: Int, height: Int) {
        self.type = type
        self.width = width
        self.height = height
    }
}
