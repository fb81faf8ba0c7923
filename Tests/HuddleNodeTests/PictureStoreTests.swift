import Foundation
import HuddleCore
import Testing

@testable import HuddleNode

/// Pictures on disk: a blob served in pieces as it was sealed, one fetched chunk by chunk becomes
/// whole, and the quota removes the oldest pictures first.
@Suite struct PictureStoreTests {
    func blob(_ fill: UInt8, bytes: Int) -> (PictureBlob, Picture) {
        let plain = [UInt8](repeating: fill, count: bytes)
        let blob = PictureBlob(sealing: plain, key: PictureBlob.newKey())
        return (blob, Picture(type: .still(.png), byteCount: bytes, width: 1, height: 1, root: blob.root, key: blob.key, caption: ""))
    }

    @Test func aKeptBlobIsServedPieceByPieceAndAFetchedOneBecomesWhole() throws {
        try withTemporaryDirectory { dir in
            let sender = PictureStore(dataDir: dir + "/a")
            let fetcher = PictureStore(dataDir: dir + "/b")
            try sender.prepare()
            try fetcher.prepare()
            let (blob, picture) = blob(9, bytes: PictureBlob.chunkBytes * 2 + 3)
            try sender.keep(blob)
            #expect(sender.heldRoots() == [blob.root])
            let list = sender.piece(PieceRequest(root: blob.root, index: 0)).bytes
            let hashes = try #require(PictureBlob.chunkHashes(list, of: picture))
            try fetcher.saveChunkList(list, of: blob.root)
            // Chunks in any order, one at a time: the part file fills, then becomes the blob.
            for index in [2, 0] {
                let chunk = sender.piece(PieceRequest(root: blob.root, index: UInt32(index + 1))).bytes
                #expect(PictureBlob.matches(chunk, hash: hashes[index]))
                try fetcher.writeChunk(chunk, index: index, of: picture)
            }
            #expect(fetcher.chunksPresent(of: picture, hashes: hashes) == [0, 2])
            try fetcher.writeChunk(sender.piece(PieceRequest(root: blob.root, index: 2)).bytes, index: 1, of: picture)
            try fetcher.complete(blob.root)
            #expect(fetcher.heldRoots() == [blob.root])
            let sealed = try #require(FileManager.default.contents(atPath: "\(fetcher.blobs)/\(picture.rootHex)"))
            #expect(PictureBlob.open(Array(sealed), of: picture) == [UInt8](repeating: 9, count: picture.byteCount))
            // Nines are no PNG, whatever the event says: no file is written for it.
            #expect(fetcher.reveal(picture) == .unreadable)
            #expect(!FileManager.default.fileExists(atPath: fetcher.shownPath(of: picture)))
            // Not held: no bytes, and no piece past the end.
            #expect(fetcher.piece(PieceRequest(root: [UInt8](repeating: 1, count: 32), index: 0)).bytes.isEmpty)
            #expect(fetcher.piece(PieceRequest(root: blob.root, index: 9)).bytes.isEmpty)
        }
    }

    @Test func theQuotaRemovesTheOldestPicturesFirst() throws {
        try withTemporaryDirectory { dir in
            let store = PictureStore(dataDir: dir)
            try store.prepare()
            var roots: [[UInt8]] = []
            for (n, fill) in [UInt8(1), 2, 3].enumerated() {
                let (blob, picture) = blob(fill, bytes: 100_000)
                try store.keep(blob)
                try Data([fill]).write(to: URL(fileURLWithPath: store.shownPath(of: picture)))
                // Written a minute apart, the first the oldest.
                try FileManager.default.setAttributes(
                    [.modificationDate: Date(timeIntervalSince1970: 1_000_000 + Double(n) * 60)],
                    ofItemAtPath: "\(store.blobs)/\(picture.rootHex)")
                roots.append(blob.root)
            }
            #expect(store.enforce(quota: 1_000_000).removed.isEmpty)
            let (removed, total) = store.enforce(quota: 250_000, keeping: roots[0])
            #expect(total <= 250_000)
            #expect(removed == [roots[1]], "the oldest but the one kept")
            #expect(store.heldRoots() == [roots[0], roots[2]])
            let left = try FileManager.default.contentsOfDirectory(atPath: store.directory)
            #expect(!left.contains { $0.hasPrefix(Picture.hex(roots[1])) })
        }
    }
}
