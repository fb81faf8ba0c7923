import HuddleCore
import NIOCore
import NIOPosix

/// Fetches a picture's blob (``PictureFetch``) over TCP from the first source that holds it:
/// the chunk list first, checked against the root the signed event named, then every chunk not
/// yet on disk, asked for at once and checked one by one against the list as it arrives. A
/// source that does not hold the blob answers with no bytes and the next is asked; one that sends
/// a chunk or list that does not match is counted (``NodeCounters/Drop/pictureMismatch``) and
/// left. What was checked stays in the part file, so the next source (or the next attempt, after
/// a restart too) asks only for the rest.
struct PictureFetcher: Sendable {
    var group: any EventLoopGroup
    var store: PictureStore
    /// Long enough for a SYN lost twice on a lossy Wi-Fi (TCP resends it after 1 s, then 3 s).
    var connectTimeout: TimeAmount = .seconds(5)
    /// Longest one source may take for a whole blob (16 MiB at a slow Wi-Fi's 2 MB/s is 8 s).
    var deadline: Duration = .seconds(60)
    /// Longest a source may go without answering a piece: then the next is asked. Past TCP's
    /// own resends on a lossy link (a segment lost twice waits about 3 s).
    var idle: TimeAmount = .seconds(8)

    /// Rounds over the sources, and the pause between them, while a source was busy: it closed
    /// the connection before answering (a node serves 4 sync connections to one address, and the
    /// members of a home behind one router share theirs).
    static let busyRounds = 4
    static let busyPause = Duration.milliseconds(150)

    func fetch(_ fetch: PictureFetch) async -> PictureFetchOutcome {
        var drops: [NodeCounters.Drop] = []
        var sources = fetch.sources
        for round in 0..<Self.busyRounds {
            var busy: [PeerAddress] = []
            for source in sources {
                do {
                    if try await fetchWithDeadline(fetch.picture, from: source) { return .held }
                } catch PictureFetchError.mismatch {
                    drops.append(.pictureMismatch)
                } catch PictureFetchError.busy {
                    busy.append(source)
                } catch {
                    continue
                }
            }
            guard !busy.isEmpty, round + 1 < Self.busyRounds else { break }
            sources = busy
            try? await Task.sleep(for: Self.busyPause)
        }
        return .failed(drops)
    }

    private func fetchWithDeadline(_ picture: Picture, from source: PeerAddress) async throws -> Bool {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask { try await fetch(picture, from: source) }
            group.addTask {
                try await Task.sleep(for: deadline)
                throw PictureFetchError.timedOut
            }
            defer { group.cancelAll() }
            return try await group.next() ?? false
        }
    }

    /// Whether the whole blob is on disk after asking `source`.
    private func fetch(_ picture: Picture, from source: PeerAddress) async throws -> Bool {
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(connectTimeout)
            .connect(host: source.host, port: Int(source.port)) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try WireFrameCoder.addHandlers(to: channel)
                    try channel.pipeline.syncOperations.addHandler(ProgressDeadlineHandler(.betweenReads(idle)))
                    return try NIOAsyncChannel<WireMessage, WireMessage>(wrappingChannelSynchronously: channel)
                }
            }
        let connected = ContinuousClock.now
        let answered = Answered()
        do {
            return try await fetch(picture, on: channel, answered: answered)
        } catch let error as PictureFetchError {
            throw error
        } catch {
            // A connection closed under the first request or its answer: a source refuses what it
            // cannot serve (4 sync connections from one address) by closing it at once.
            throw !answered.any && ContinuousClock.now - connected < .seconds(1) ? PictureFetchError.busy : error
        }
    }

    /// Whether a source answered anything on a connection.
    private final class Answered: @unchecked Sendable {
        // @unchecked: read and written by the one task that runs the fetch.
        var any = false
    }

    private func fetch(
        _ picture: Picture, on channel: NIOAsyncChannel<WireMessage, WireMessage>, answered: Answered
    ) async throws -> Bool {
        let connected = ContinuousClock.now
        return try await channel.executeThenClose { inbound, outbound in
            var responses = inbound.makeAsyncIterator()
            func answer(to index: UInt32) async throws -> [UInt8]? {
                let next = try await responses.next()
                if next == nil, !answered.any {
                    // Closed at once: too many connections there. Closed later: it went quiet.
                    throw ContinuousClock.now - connected < .seconds(1) ? PictureFetchError.busy : PictureFetchError.timedOut
                }
                answered.any = true
                guard case .piece(let piece) = next, piece.root == picture.root, piece.index == index
                else { throw PictureFetchError.unexpectedReply }
                return piece.bytes.isEmpty ? nil : piece.bytes
            }
            var list = store.savedChunkList(picture.root)
            if list == nil {
                try await outbound.write(.pieceRequest(PieceRequest(root: picture.root, index: 0)))
                guard let fetched = try await answer(to: 0) else { return false }
                guard PictureBlob.chunkHashes(fetched, of: picture) != nil else { throw PictureFetchError.mismatch }
                try store.saveChunkList(fetched, of: picture.root)
                list = fetched
            }
            guard let list, let hashes = PictureBlob.chunkHashes(list, of: picture) else {
                throw PictureFetchError.mismatch
            }
            let present = store.chunksPresent(of: picture, hashes: hashes)
            let missing = hashes.indices.filter { !present.contains($0) }
            // Every request at once: the source answers them in order, back to back.
            for index in missing {
                try await outbound.write(.pieceRequest(PieceRequest(root: picture.root, index: UInt32(index + 1))))
            }
            for index in missing {
                guard let chunk = try await answer(to: UInt32(index + 1)) else { return false }
                guard PictureBlob.matches(chunk, hash: hashes[index]) else { throw PictureFetchError.mismatch }
                try store.writeChunk(chunk, index: index, of: picture)
            }
            try store.complete(picture.root)
            return true
        }
    }
}

enum PictureFetchError: Error {
    /// A chunk list or a chunk that does not match what the event named.
    case mismatch
    case unexpectedReply
    /// The source closed the connection before answering anything: too many connections.
    case busy
    case timedOut
}
