import Testing

@testable import HuddleCore

/// A picture's blob: sealed in chunks, named by its chunk list, opened only with its key.
@Suite(.offThePool) struct PictureBlobTests {
    func picture(_ blob: PictureBlob, byteCount: Int) -> Picture {
        Picture(type: .still(.jpeg), byteCount: byteCount, width: 1, height: 1, root: blob.root, key: blob.key, caption: "")
    }

    @Test(arguments: [1, PictureBlob.chunkBytes - 1, PictureBlob.chunkBytes, PictureBlob.chunkBytes * 3 + 17])
    func aBlobOpensToItsBytesAndEveryChunkMatchesItsList(byteCount: Int) {
        var random = SplitMix64(seed: UInt64(byteCount))
        let bytes = (0..<byteCount).map { _ in UInt8.random(in: 0...255, using: &random) }
        let blob = PictureBlob(sealing: bytes, key: PictureBlob.newKey())
        let picture = picture(blob, byteCount: byteCount)
        let hashes = try! #require(PictureBlob.chunkHashes(blob.chunkList, of: picture))
        #expect(hashes.count == PictureBlob.chunkCount(byteCount: byteCount) && hashes.count == blob.chunks.count)
        for (chunk, hash) in zip(blob.chunks, hashes) { #expect(PictureBlob.matches(chunk, hash: hash)) }
        let sealed = blob.chunks.flatMap { $0 }
        #expect(sealed.count == PictureBlob.sealedByteCount(byteCount: byteCount))
        #expect(PictureBlob.open(sealed, of: picture) == bytes)
        // Sealing is a function of key and bytes: a fetcher holds what the sender holds.
        #expect(PictureBlob(sealing: bytes, key: blob.key).root == blob.root)
    }

    @Test func aChangedByteAWrongKeyOrAnotherSizeIsFoundOut() {
        let bytes = [UInt8](repeating: 7, count: PictureBlob.chunkBytes + 5)
        let blob = PictureBlob(sealing: bytes, key: PictureBlob.newKey())
        let picture = picture(blob, byteCount: bytes.count)
        var chunk = blob.chunks[1]
        chunk[0] ^= 1
        #expect(!PictureBlob.matches(chunk, hash: PictureBlob.chunkHashes(blob.chunkList, of: picture)![1]))
        var list = blob.chunkList
        list[3] ^= 1
        #expect(PictureBlob.chunkHashes(list, of: picture) == nil)
        var larger = picture
        larger.byteCount += 1
        #expect(PictureBlob.chunkHashes(blob.chunkList, of: larger) == nil, "the root binds the size")
        var wrongKey = picture
        wrongKey.key = PictureBlob.newKey()
        #expect(PictureBlob.open(blob.chunks.flatMap { $0 }, of: wrongKey) == nil)
        // Ciphertext: the bytes are nowhere in the blob.
        #expect(!blob.chunks[0].starts(with: [7, 7, 7, 7, 7, 7, 7, 7]))
    }
}
