import Foundation
import HuddleCore

/// Pictures on disk, in `<dataDir>/pictures/` (mode 0700):
///
///     blobs/<root>            a whole sealed blob (``PictureBlob``), every chunk checked: served to peers
///     blobs/<root>.chunks     its chunk list
///     blobs/<root>.part       a blob being fetched: checked chunks at their places, the rest zero
///     <root>.<jpg|png|webp>   the picture itself, written when its message is shown (never before)
///
/// `<root>` is the root's 64 hex digits. A blob is sealed: the key is only in its event, so the
/// blobs a node holds and serves say nothing to whoever reads the disk or the wire without it.
/// Files are mode 0600. Every method is synchronous file work: call it off the node's actor for
/// anything large (``PictureFetcher`` and the sync server do).
struct PictureStore: Sendable {
    let directory: String
    var blobs: String { directory + "/blobs" }

    init(dataDir: String) {
        directory = dataDir + "/pictures"
    }

    /// Creates the directories if they are missing.
    func prepare() throws {
        for path in [directory, blobs] {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
    }

    /// The roots of every whole blob.
    func heldRoots() -> Set<[UInt8]> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: blobs)) ?? []
        return Set(names.compactMap { name in name.count == 64 ? Self.bytes(hex: name) : nil })
    }

    /// Where `picture` is shown from, once its message is (``reveal(_:)``).
    func shownPath(of picture: Picture) -> String {
        "\(directory)/\(picture.rootHex).\(picture.type.fileExtension)"
    }

    /// Keeps a blob this node sealed itself (a picture it sends).
    func keep(_ blob: PictureBlob) throws {
        let name = Picture.hex(blob.root)
        try write(blob.chunkList, to: "\(blobs)/\(name).chunks")
        try write(blob.chunks.flatMap { $0 }, to: "\(blobs)/\(name)")
    }

    /// What opening a picture's blob came to.
    enum Reveal: Equatable {
        /// Its own file, at this path.
        case shown(String)
        /// The blob is not (all) here.
        case missing
        /// The blob is here (every chunk matched its root) but this event's key does not open it,
        /// or what opens is not the picture the event says (another type or size in pixels, over
        /// the cap): no file is written.
        case unreadable
    }

    /// The picture's own bytes in ``shownPath(of:)``, opened from its blob with this event's key
    /// and checked against what the event says, stripped of metadata again whatever its writer
    /// did. Every event is checked on its own: one naming another's blob with its own key or size
    /// gets nothing, and the file another's event wrote stays its.
    func reveal(_ picture: Picture) -> Reveal {
        let path = shownPath(of: picture)
        guard let sealed = FileManager.default.contents(atPath: "\(blobs)/\(picture.rootHex)") else { return .missing }
        guard let plain = PictureBlob.open(Array(sealed), of: picture), picture.matches(opened: plain),
            let clean = try? MediaFile.stripped(plain)
        else { return .unreadable }
        if FileManager.default.fileExists(atPath: path) { return .shown(path) }
        return (try? write(clean, to: path)).map { .shown(path) } ?? .missing
    }

    /// Bytes a picture takes here once shown: its sealed blob, its chunk list, its own file.
    static func bytesOnDisk(of picture: Picture) -> Int {
        PictureBlob.sealedByteCount(byteCount: picture.byteCount) + PictureBlob.chunkCount(byteCount: picture.byteCount) * 32
            + picture.byteCount
    }

    /// Removes the oldest pictures (blob, chunk list, own file, by when the blob was written) until
    /// every picture together takes at most `quota` bytes; returns the roots removed and the bytes
    /// left. `keeping` is never removed (the one just sent or fetched). It reads the whole
    /// directory: call it when a running count says the quota may be passed, not for every picture.
    func enforce(quota: Int, keeping: [UInt8]? = nil) -> (removed: [[UInt8]], total: Int) {
        let manager = FileManager.default
        let files = (try? manager.contentsOfDirectory(atPath: directory)) ?? []
        var held: [(root: String, at: Date, bytes: Int)] = []
        var total = 0
        for name in (try? manager.contentsOfDirectory(atPath: blobs)) ?? [] {
            let attributes = try? manager.attributesOfItem(atPath: "\(blobs)/\(name)")
            let bytes = (attributes?[.size] as? NSNumber)?.intValue ?? 0
            total += bytes
            guard name.count == 64 else { continue }
            let own = files.filter { $0.hasPrefix(name) }.reduce(0) { sum, file in
                sum + ((try? manager.attributesOfItem(atPath: "\(directory)/\(file)"))?[.size] as? NSNumber ?? 0).intValue
            }
            total += own
            held.append((name, attributes?[.modificationDate] as? Date ?? .distantPast, bytes + own))
        }
        var removed: [[UInt8]] = []
        let keep = keeping.map(Picture.hex)
        for picture in held.sorted(by: { $0.at < $1.at }) where total > quota && picture.root != keep {
            for path in ["\(blobs)/\(picture.root)", "\(blobs)/\(picture.root).chunks"]
                + files.filter({ $0.hasPrefix(picture.root) }).map({ "\(directory)/\($0)" })
            {
                try? manager.removeItem(atPath: path)
            }
            total -= picture.bytes
            if let root = Self.bytes(hex: picture.root) { removed.append(root) }
        }
        return (removed, total)
    }

    // MARK: Serving

    /// Piece `index` of a whole blob (0: its chunk list), or no bytes when it is not held here.
    func piece(_ request: PieceRequest) -> Piece {
        let none = Piece(root: request.root, index: request.index, bytes: [])
        guard request.root.count == Picture.hashByteCount else { return none }
        let name = "\(blobs)/\(Picture.hex(request.root))"
        guard request.index > 0 else {
            guard FileManager.default.fileExists(atPath: name),
                let list = FileManager.default.contents(atPath: name + ".chunks")
            else { return none }
            return Piece(root: request.root, index: 0, bytes: Array(list))
        }
        guard let handle = FileHandle(forReadingAtPath: name) else { return none }
        defer { try? handle.close() }
        let offset = UInt64(request.index - 1) * UInt64(PictureBlob.sealedChunkBytes)
        guard (try? handle.seek(toOffset: offset)) != nil,
            let data = try? handle.read(upToCount: PictureBlob.sealedChunkBytes), !data.isEmpty
        else { return none }
        return Piece(root: request.root, index: request.index, bytes: Array(data))
    }

    // MARK: Fetching

    /// The chunk list fetched earlier for `root`, if any (a fetch resumes from it).
    func savedChunkList(_ root: [UInt8]) -> [UInt8]? {
        FileManager.default.contents(atPath: "\(blobs)/\(Picture.hex(root)).chunks").map(Array.init)
    }

    func saveChunkList(_ list: [UInt8], of root: [UInt8]) throws {
        try write(list, to: "\(blobs)/\(Picture.hex(root)).chunks")
    }

    /// Which chunks of a blob being fetched are already in its part file, checked against `hashes`.
    func chunksPresent(of picture: Picture, hashes: [[UInt8]]) -> Set<Int> {
        guard let handle = FileHandle(forReadingAtPath: partPath(picture.root)) else { return [] }
        defer { try? handle.close() }
        var present: Set<Int> = []
        for (index, hash) in hashes.enumerated() {
            let range = PictureBlob.sealedRange(of: index, byteCount: picture.byteCount)
            guard (try? handle.seek(toOffset: UInt64(range.lowerBound))) != nil,
                let data = try? handle.read(upToCount: range.count), data.count == range.count,
                PictureBlob.matches(Array(data), hash: hash)
            else { continue }
            present.insert(index)
        }
        return present
    }

    /// Writes a checked chunk at its place in the part file.
    func writeChunk(_ bytes: [UInt8], index: Int, of picture: Picture) throws {
        let path = partPath(picture.root)
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteUnknown)
            }
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(PictureBlob.sealedRange(of: index, byteCount: picture.byteCount).lowerBound))
        try handle.write(contentsOf: bytes)
    }

    /// The part file is whole: it becomes the blob.
    func complete(_ root: [UInt8]) throws {
        let name = "\(blobs)/\(Picture.hex(root))"
        _ = rename(name + ".part", name)
    }

    private func partPath(_ root: [UInt8]) -> String { "\(blobs)/\(Picture.hex(root)).part" }

    /// Writes a file whole (a temporary name, then renamed), mode 0600.
    private func write(_ bytes: [UInt8], to path: String) throws {
        let temporary = path + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary]) }
        guard rename(temporary, path) == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
    }

    static func bytes(hex: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in hex.utf8 {
            let nibble: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
            default: return nil
            }
            if let value = high {
                bytes.append(value << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return high == nil ? bytes : nil
    }
}
