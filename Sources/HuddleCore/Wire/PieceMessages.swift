/// Fetching a picture's blob (``PictureBlob``) over a sync connection (TCP only):
///
///     kind 12 pieceRequest  root:32 index:u32
///     kind 13 piece         root:32 index:u32 length:u32 bytes[length]
///
/// Piece 0 is the blob's chunk list, piece i ≥ 1 its chunk i − 1. A node answers every request
/// in order, with the piece, or with no bytes when it does not hold it; the fetcher checks what
/// it gets against the root it asked for (``PictureBlob/chunkHashes(_:of:)``) and asks elsewhere.
public struct PieceRequest: Hashable, Sendable {
    public var root: [UInt8]
    public var index: UInt32

    public init(root: [UInt8], index: UInt32) {
        self.root = root
        self.index = index
    }
}

/// One piece of a blob, or an empty answer: "I do not hold it".
public struct Piece: Hashable, Sendable {
    public var root: [UInt8]
    public var index: UInt32
    public var bytes: [UInt8]

    public init(root: [UInt8], index: UInt32, bytes: [UInt8]) {
        self.root = root
        self.index = index
        self.bytes = bytes
    }

    /// Most bytes in a piece: one sealed chunk (a chunk list is shorter).
    public static let maxBytes = PictureBlob.sealedChunkBytes
}

extension ByteWriter {
    mutating func write(_ request: PieceRequest) {
        write(bytes: request.root.prefix(Picture.hashByteCount))
        write(request.index)
    }

    mutating func write(_ piece: Piece) {
        write(bytes: piece.root.prefix(Picture.hashByteCount))
        write(piece.index)
        write(UInt32(clamping: piece.bytes.count))
        write(bytes: piece.bytes)
    }

    /// A picture body after its tag: `type:u8 byteCount:u32 width:u16 height:u16 milliseconds:u32
    /// root:32 key:32 caption:str`.
    mutating func write(_ picture: Picture) {
        write(picture.type.rawValue)
        write(UInt32(clamping: picture.byteCount))
        write(UInt16(clamping: picture.width))
        write(UInt16(clamping: picture.height))
        write(UInt32(clamping: picture.milliseconds))
        write(bytes: picture.root.prefix(Picture.hashByteCount))
        write(bytes: picture.key.prefix(Picture.hashByteCount))
        write(string: picture.caption)
    }
}

extension ByteReader {
    mutating func readPieceRequest() throws(WireError) -> PieceRequest {
        PieceRequest(root: Array(try readBytes(Picture.hashByteCount)), index: try readUInt32())
    }

    mutating func readPiece() throws(WireError) -> Piece {
        let root = Array(try readBytes(Picture.hashByteCount))
        let index = try readUInt32()
        let at = offset
        let length = Int(try readUInt32())
        guard length <= Piece.maxBytes else {
            throw .lengthOutOfRange(.piece, length: length, min: 0, max: Piece.maxBytes, offset: at)
        }
        return Piece(root: root, index: index, bytes: Array(try readBytes(length)))
    }

    /// A picture body after its tag. Any size and any pixel count decode: a node refuses to fetch
    /// a picture over its limits (``Picture/isWithinLimits``) and says so, rather than dropping
    /// the whole event (its caption is a line like any other).
    mutating func readPicture() throws(WireError) -> Picture {
        let at = offset
        let rawType = try readUInt8()
        guard let type = MediaType(rawValue: rawType) else { throw .unknownPictureType(rawType, offset: at) }
        return Picture(
            type: type, byteCount: Int(try readUInt32()), width: Int(try readUInt16()), height: Int(try readUInt16()),
            milliseconds: Int(try readUInt32()), root: Array(try readBytes(Picture.hashByteCount)), key: Array(try readBytes(Picture.hashByteCount)),
            caption: try readString(.caption, maxBytes: Picture.maxCaptionBytes))
    }
}

extension Picture {
    /// Bytes of the body after its tag.
    var encodedByteCount: Int { 1 + 4 + 2 + 2 + 4 + 2 * Picture.hashByteCount + 2 + caption.utf8.count }
}
