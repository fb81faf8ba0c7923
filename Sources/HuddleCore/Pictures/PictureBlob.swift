import Crypto

/// A picture as it travels and rests on other nodes: sealed in chunks, named by the hash of its
/// chunk list, so any peer can pass it on and no peer can change a byte of it.
///
///     chunk i   = ChaCha20-Poly1305(key, nonce: i as 12 bytes big-endian, plaintext[i·256 KiB ..< (i+1)·256 KiB])
///                 (ciphertext and its 16-byte tag; the nonce is not stored)
///     chunks    = SHA-256(chunk 0) ‖ SHA-256(chunk 1) ‖ …        the chunk list, 32 bytes a chunk
///     root      = SHA-256("huddle picture v1" ‖ byteCount:u32 ‖ chunks)
///
/// A fetcher asks first for the chunk list (piece 0), checks it against the root the signed event
/// named, then asks for chunks (pieces 1…) and keeps each one only when its hash is the list's:
/// a peer that sends one wrong byte is found out at that chunk, and the fetcher asks another.
/// The key is only in the event, so a node that has not got the event (a stranger, a peer outside
/// a private room) learns nothing from the blob. Sealing is a function of the key and the bytes:
/// the sender's node and every fetcher hold the same blob.
public struct PictureBlob: Sendable {
    /// Bytes of plaintext in each chunk but the last.
    public static let chunkBytes = 256 * 1024
    /// What sealing adds to each chunk: Poly1305's tag.
    public static let tagBytes = 16
    /// Bytes of one sealed chunk (the last may be shorter).
    public static let sealedChunkBytes = chunkBytes + tagBytes

    public let key: [UInt8]
    /// The sealed chunks, in order.
    public let chunks: [[UInt8]]
    /// The chunk list (``chunkList(of:)``).
    public let chunkList: [UInt8]
    public let root: [UInt8]

    /// A fresh random key for one picture.
    public static func newKey() -> [UInt8] {
        SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
    }

    /// Seals `plaintext` (at most ``Picture/maxBytes``) under `key` (32 bytes).
    public init(sealing plaintext: [UInt8], key: [UInt8]) {
        self.key = key
        let symmetric = SymmetricKey(data: key)
        var chunks: [[UInt8]] = []
        for index in 0..<Self.chunkCount(byteCount: plaintext.count) {
            let range = Self.plainRange(of: index, byteCount: plaintext.count)
            // Sealing with a 32-byte key and a 12-byte nonce cannot fail.
            let box = try! ChaChaPoly.seal(plaintext[range], using: symmetric, nonce: Self.nonce(index))
            chunks.append(Array(box.ciphertext) + Array(box.tag))
        }
        self.chunks = chunks
        chunkList = chunks.flatMap { Array(SHA256.hash(data: $0)) }
        root = Self.root(chunkList: chunkList, byteCount: plaintext.count)
    }

    /// How many chunks a picture of `byteCount` bytes seals into.
    public static func chunkCount(byteCount: Int) -> Int {
        max(1, (byteCount + chunkBytes - 1) / chunkBytes)
    }

    /// Where chunk `index` sits in the sealed blob as one file: chunks back to back.
    public static func sealedRange(of index: Int, byteCount: Int) -> Range<Int> {
        let plain = plainRange(of: index, byteCount: byteCount)
        let start = index * sealedChunkBytes
        return start..<start + plain.count + tagBytes
    }

    /// Bytes of the whole sealed blob.
    public static func sealedByteCount(byteCount: Int) -> Int {
        sealedRange(of: chunkCount(byteCount: byteCount) - 1, byteCount: byteCount).upperBound
    }

    static func plainRange(of index: Int, byteCount: Int) -> Range<Int> {
        let start = index * chunkBytes
        return start..<min(byteCount, start + chunkBytes)
    }

    static func nonce(_ index: Int) -> ChaChaPoly.Nonce {
        var bytes = [UInt8](repeating: 0, count: 12)
        for shift in 0..<4 { bytes[11 - shift] = UInt8(truncatingIfNeeded: index >> (8 * shift)) }
        return try! ChaChaPoly.Nonce(data: bytes)
    }

    /// The root a chunk list and a size make (see the type).
    public static func root(chunkList: [UInt8], byteCount: Int) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: Array("huddle picture v1".utf8))
        hasher.update(data: (0..<4).map { UInt8(truncatingIfNeeded: UInt32(clamping: byteCount) >> (24 - 8 * $0)) })
        hasher.update(data: chunkList)
        return Array(hasher.finalize())
    }

    /// The chunk hashes of `picture`'s blob, if `chunkList` is its list: the right length, and
    /// the root the event named.
    public static func chunkHashes(_ chunkList: [UInt8], of picture: Picture) -> [[UInt8]]? {
        guard chunkList.count == chunkCount(byteCount: picture.byteCount) * 32,
            root(chunkList: chunkList, byteCount: picture.byteCount) == picture.root
        else { return nil }
        return stride(from: 0, to: chunkList.count, by: 32).map { Array(chunkList[$0..<$0 + 32]) }
    }

    /// Whether `chunk` is the one whose hash the list gives.
    public static func matches(_ chunk: [UInt8], hash: [UInt8]) -> Bool {
        Array(SHA256.hash(data: chunk)) == hash
    }

    /// The picture's bytes from its whole sealed blob, or `nil` if a chunk does not open (the
    /// wrong key, or bytes changed on disk).
    public static func open(_ sealed: [UInt8], of picture: Picture) -> [UInt8]? {
        guard sealed.count == sealedByteCount(byteCount: picture.byteCount) else { return nil }
        let key = SymmetricKey(data: picture.key)
        var plaintext: [UInt8] = []
        plaintext.reserveCapacity(picture.byteCount)
        for index in 0..<chunkCount(byteCount: picture.byteCount) {
            let range = sealedRange(of: index, byteCount: picture.byteCount)
            guard
                let box = try? ChaChaPoly.SealedBox(
                    nonce: nonce(index), ciphertext: sealed[range.lowerBound..<range.upperBound - tagBytes],
                    tag: sealed[range.upperBound - tagBytes..<range.upperBound]),
                let chunk = try? ChaChaPoly.open(box, using: key)
            else { return nil }
            plaintext += chunk
        }
        return plaintext
    }
}
