/// A picture in a message: what its event carries so that every member can fetch the bytes,
/// check them and open them, and nothing that shows before the message does.
///
/// The bytes never travel in the event. The sender seals the picture in chunks under a key of its
/// own (``PictureBlob``), and the event names the sealed blob by its ``root`` and carries the
/// ``key``: a node fetches the blob from any peer as soon as the event arrives, checks each
/// chunk against the root before it keeps it, and opens it when the message is due. In a private
/// room the event body is sealed with the room's key, so the key and the root are too, and the
/// blob on the wire is ciphertext to everyone else.
///
/// ```swift
/// let blob = PictureBlob(sealing: stripped, key: PictureBlob.newKey())
/// let picture = Picture(type: .jpeg, byteCount: stripped.count, width: 1600, height: 900,
///                       root: blob.root, key: blob.key, caption: "the replay")
/// machine.originate(.picture(picture), in: "superbowl", now: now)
/// ```
public struct Picture: Hashable, Sendable {
    /// A still (JPEG, PNG, WebP) or a short clip (MP4, WebM).
    public var type: MediaType
    /// Bytes of the picture file (before sealing): at most ``maxBytes``.
    public var byteCount: Int
    /// Its size in pixels, as its header says (``PictureFile/header(of:)``): the page keeps room
    /// for it, and a node refuses a picture too large to decode without reading it.
    public var width: Int
    public var height: Int
    /// How long a clip plays, in ms; 0 for a still.
    public var milliseconds: Int
    /// SHA-256 of the sealed blob's chunk list (``PictureBlob/root``): the name it is fetched by
    /// and what every chunk is checked against.
    public var root: [UInt8]
    /// The ChaCha20-Poly1305 key the chunks are sealed with.
    public var key: [UInt8]
    /// What the sender wrote with it; may be empty.
    public var caption: String

    /// Largest picture a node sends or fetches: 16 MiB.
    public static let maxBytes = 16 * 1024 * 1024
    /// Largest caption, in UTF-8 bytes (a picture's event stays under the largest chat event).
    public static let maxCaptionBytes = 1024
    /// Size of ``root`` and of ``key``.
    public static let hashByteCount = 32

    public init(
        type: MediaType, byteCount: Int, width: Int, height: Int, milliseconds: Int = 0, root: [UInt8], key: [UInt8],
        caption: String
    ) {
        self.type = type
        self.byteCount = byteCount
        self.width = width
        self.height = height
        self.milliseconds = milliseconds
        self.root = root
        self.key = key
        self.caption = caption
    }

    /// What a fetch of this picture is, whoever names it: the blob (root), the size the root binds,
    /// and the key that opens it. Two events naming one root with another size or key are two
    /// fetches, so one writer's event cannot spoil another's (a wrong size never verifies, a wrong
    /// key never opens).
    public var identity: PictureIdentity { PictureIdentity(root: root, byteCount: byteCount, key: key) }

    /// The root as 64 hex digits: the blob's file name, and how logs and `--json` name it.
    public var rootHex: String { Self.hex(root) }

    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether `bytes`, opened from the blob, are the picture this says: its type and size in
    /// pixels, as its header says, within the pixel cap. A writer's event is only its word: a node
    /// writes no file (and a page decodes nothing) whose header says otherwise.
    public func matches(opened bytes: [UInt8]) -> Bool {
        guard let header = try? MediaFile.header(of: bytes) else { return false }
        return header.type == type && header.width == width && header.height == height
            && header.milliseconds == milliseconds
    }

    /// Whether the picture is one a node may fetch and show: a size within ``maxBytes``, pixels
    /// within ``PictureFile/maxPixels``, and a chunk list that fits (checked before a byte of it
    /// is fetched).
    public var isWithinLimits: Bool {
        (1...Self.maxBytes).contains(byteCount) && (1...Int(UInt16.max)).contains(width)
            && (1...Int(UInt16.max)).contains(height) && width * height <= PictureFile.maxPixels
            && (type.isClip ? (1...ClipFile.maxMilliseconds).contains(milliseconds) : milliseconds == 0)
    }
}

/// A picture's blob as one event names it: see ``Picture/identity``.
public struct PictureIdentity: Hashable, Sendable {
    public var root: [UInt8]
    public var byteCount: Int
    public var key: [UInt8]
}
