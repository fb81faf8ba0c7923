/// Pictures on the node: which blobs to fetch and from whom, when a stranger's picture may be
/// fetched, and telling the reader when a picture shown before its bytes arrived is here.
///
/// A picture's bytes travel ahead of its moment: as soon as a picture event is taken in, the
/// machine asks the shell to fetch its blob (``NodeEffect/fetchPicture(_:)``) from the room's
/// live peers, the writer first. What the message shows waits for the reader's moment like any
/// line; only the bytes come early, sealed, and nothing about them is said before.
///
/// ```
/// effect  .fetchPicture(fetch)                 fetch the blob, checking each chunk
/// input   .pictureFetched(id, .held)           it is all here (or .failed: asked again later)
/// output  .pictureArrived(message)             if its message was shown before it was here
/// ```
extension NodeMachine {
    /// How long after a failed fetch the machine asks again, with the peers live then: a second
    /// after the first failure (a source that was busy, a peer that had not got it yet), twice as
    /// long after each next, up to this.
    public static let pictureRetryAfter = TimeSpan.seconds(10)

    /// The wait after the `attempts`th failed fetch: 1, 2, 4, 8, then 10 s.
    static func pictureRetry(after attempts: Int) -> TimeSpan {
        min(pictureRetryAfter, .seconds(1 << Int64(min(max(attempts - 1, 0), 4))))
    }
    /// Most fetches of one blob before the machine gives up until a restart.
    public static let pictureAttempts = 30

    /// `/photo PATH [caption]`: the shell reads, strips and seals the picture, then answers with
    /// ``NodeInput/picturePrepared(_:room:from:)``.
    mutating func preparePicture(_ source: PictureSource, caption: String, now: NodeTime) {
        guard let room = currentRoom, joined.contains(room) else { return reject(.noRoom) }
        if caption.utf8.count > Picture.maxCaptionBytes {
            return reject(.invalid("a caption is at most \(Picture.maxCaptionBytes) bytes"))
        }
        emit(.preparePicture(source, caption: caption, room: room, face: answering))
    }

    /// The shell prepared a picture (its blob is stored here): it goes out as the next message
    /// of `room`, or the reader hears why not.
    mutating func picturePrepared(_ result: Result<Picture, PictureProblem>, room: String, now: NodeTime) {
        switch result {
        case .failure(let problem):
            reject(.picture(problem))
        case .success(let picture):
            pictures.held.insert(picture.root)
            guard joined.contains(room) else { return reject(.noRoom) }
            originate(.picture(picture), in: room, now: now)
        }
    }

    /// Picture events just taken into `room`: fetch each blob not here yet, unless its writer is a
    /// stranger (parked until it is vouched for) or it is over the limits (refused, counted).
    mutating func picturesArrived(_ events: [Event], room: String, now: NodeTime) {
        for event in events {
            guard let picture = event.body.picture, event.origin != identity.id else { continue }
            wantPicture(picture, of: event.origin, room: room, now: now)
        }
    }

    mutating func wantPicture(_ picture: Picture, of origin: NodeID, room: String, now: NodeTime) {
        let id = picture.identity
        guard !pictures.held.contains(picture.root), pictures.wanted[id] == nil, !pictures.refused.contains(id) else { return }
        guard picture.isWithinLimits else {
            pictures.refused.insert(id)
            return counters.count(.pictureTooLarge)
        }
        guard membership.isProven(origin) || membership.hasVouched(origin) else {
            guard pictures.mayPark(from: origin) else { return counters.count(.pictureParked) }
            pictures.parked[origin, default: [:]][id] = (room, picture)
            return
        }
        guard pictures.admit(picture, of: origin, now: now.monotonic) else {
            pictures.refused.insert(id)
            return counters.count(.pictureBudget)
        }
        pictures.wanted[id] = PictureWant(picture: picture, room: room, origin: origin)
        fetchPicture(id, now: now)
    }

    /// A picture of the store whose blob is not all here and whose message is still to show: its
    /// writer was admitted when it came, so it is fetched at the next tick, once peers are there
    /// to ask.
    mutating func wantStoredPicture(_ picture: Picture, of origin: NodeID, room: String, now: NodeTime) {
        let id = picture.identity
        guard !pictures.held.contains(picture.root), pictures.wanted[id] == nil, picture.isWithinLimits else { return }
        pictures.wanted[id] = PictureWant(picture: picture, room: room, origin: origin, retryAt: now.wall)
    }

    /// Asks the shell for a picture's blob from the room's live peers, the writer first.
    mutating func fetchPicture(_ id: PictureIdentity, now: NodeTime) {
        guard var want = pictures.wanted[id] else { return }
        let peers = membership.alivePeers(inRoom: want.room)
        let sources = (peers.filter { $0.id == want.origin } + peers.filter { $0.id != want.origin }).map(\.syncAddress)
        guard !sources.isEmpty else {
            // Nobody to ask yet (a restart, before peers answer): not an attempt.
            want.retryAt = now.wall + Self.pictureRetryAfter
            pictures.wanted[id] = want
            return
        }
        want.attempts += 1
        want.retryAt = nil
        pictures.wanted[id] = want
        emit(.fetchPicture(PictureFetch(picture: want.picture, room: want.room, origin: want.origin, sources: sources)))
    }

    /// What a fetch came to.
    mutating func pictureFetched(_ id: PictureIdentity, _ outcome: PictureFetchOutcome, now: NodeTime) {
        guard var want = pictures.wanted[id] else { return }
        switch outcome {
        case .held:
            pictures.wanted[id] = nil
            pictures.held.insert(id.root)
            // Every message of that blob shown meanwhile: the shell opens each with its own key.
            for (room, message) in pictures.shownMissing.removeValue(forKey: id.root) ?? [] {
                var message = message
                message.pictureMissing = false
                show([.pictureArrived(message)], room: room, now: now)
            }
        case .failed(let drops):
            for drop in drops { counters.count(drop) }
            guard want.attempts < Self.pictureAttempts else {
                // Given up until a restart: its line keeps saying it is on its way.
                pictures.wanted[id] = nil
                if !pictures.wanted.keys.contains(where: { $0.root == id.root }) { pictures.shownMissing[id.root] = nil }
                return
            }
            want.retryAt = now.wall + Self.pictureRetry(after: want.attempts)
            pictures.wanted[id] = want
        }
    }

    /// Fetches due again, and a stranger's pictures once it is vouched for.
    mutating func pictureTick(now: NodeTime) {
        for (id, want) in pictures.wanted where want.retryAt.map({ $0 <= now.wall }) ?? false {
            // Held meanwhile through another fetch of the blob: nothing more to ask.
            guard !pictures.held.contains(id.root) else {
                pictures.wanted[id] = nil
                continue
            }
            fetchPicture(id, now: now)
        }
        for (origin, parked) in pictures.parked where membership.isProven(origin) || membership.hasVouched(origin) {
            pictures.parked[origin] = nil
            for (_, entry) in parked { wantPicture(entry.picture, of: origin, room: entry.room, now: now) }
        }
    }

    /// Marks messages about to be shown whose picture is not all here, and remembers them to say
    /// when it is (``RoomOutput/pictureArrived(_:)``).
    mutating func markMissingPictures(_ outputs: [RoomOutput], room: String) -> [RoomOutput] {
        func marked(_ message: ShownMessage) -> ShownMessage {
            guard let picture = message.picture, !pictures.held.contains(picture.root) else { return message }
            var message = message
            if !picture.isWithinLimits || pictures.refused.contains(picture.identity) {
                message.pictureRefused = true
                return message
            }
            message.pictureMissing = true
            pictures.shownMissing[picture.root, default: []].append((room, message))
            return message
        }
        return outputs.map { output in
            switch output {
            case .message(let message): .message(marked(message))
            case .earlier(let items):
                .earlier(items.map { item in
                    if case .message(let message) = item { .message(marked(message)) } else { item }
                })
            default: output
            }
        }
    }
}

/// Where a picture to send comes from: a file the reader named, or bytes a paired page sent.
public enum PictureSource: Sendable, Equatable {
    case file(String)
    case bytes([UInt8])
}

/// Why a picture was not sent.
public struct PictureProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A blob to fetch (``NodeEffect/fetchPicture(_:)``): from the first of `sources` that holds it.
public struct PictureFetch: Sendable, Equatable {
    public var picture: Picture
    public var room: String
    /// Its writer: a shell runs one fetch per writer at a time, so one writer whose pictures do
    /// not come holds up nobody else's.
    public var origin: NodeID
    /// Peers' sync (TCP) addresses, the writer's first.
    public var sources: [PeerAddress]
}

/// What a fetch came to (``NodeInput/pictureFetched(_:_:)``).
public enum PictureFetchOutcome: Sendable, Equatable {
    /// The whole blob is on this node, every chunk checked.
    case held
    /// No source gave all of it; what was refused on the way (a chunk that did not match).
    case failed([NodeCounters.Drop])
}

/// A picture the node fetches: where it came from, how often it was asked for.
struct PictureWant: Sendable {
    var picture: Picture
    var room: String
    var origin: NodeID
    var attempts = 0
    var retryAt: WallTime?
}

/// The machine's pictures (`NodeMachine+Pictures`).
struct PictureState: Sendable {
    /// Blobs all on this node (the shell says at start which; fetches and sends add).
    var held: Set<[UInt8]> = []
    /// Pictures being fetched or waiting to be asked again, as each event names them.
    var wanted: [PictureIdentity: PictureWant] = [:]
    /// Strangers' pictures, until the stranger is vouched for.
    var parked: [NodeID: [PictureIdentity: (room: String, picture: Picture)]] = [:]
    /// Pictures over the limits or past their writer's budget: never fetched.
    var refused: Set<PictureIdentity> = []
    /// Messages shown before their picture was here, by root.
    var shownMissing: [[UInt8]: [(room: String, message: ShownMessage)]] = [:]
    /// Each writer's budget of picture bytes (``byteRate``).
    var budgets: [NodeID: TokenBuckets.Bucket] = [:]

    /// What a writer's pictures may take: 256 KiB a second, 64 MiB at once (a photo every few
    /// seconds all evening, forty in a burst). A picture costs at least ``leastCost``, so ten
    /// thousand tiny ones run out as a few hundred large ones would.
    static let byteRate = TokenBuckets.Rate(perSecond: 256 * 1024, burst: 64 * 1024 * 1024)
    static let leastCost = 64 * 1024
    /// Strangers' pictures kept until they are vouched for: per stranger, and all together.
    static let parkedPerOrigin = 16
    static let parkedTotal = 256

    /// Whether `origin`'s budget covers `picture`; spends it if so.
    mutating func admit(_ picture: Picture, of origin: NodeID, now: MonotonicTime) -> Bool {
        var bucket = TokenBuckets.refill(budgets[origin], rate: Self.byteRate, now: now)
        let cost = Double(max(picture.byteCount, Self.leastCost))
        guard bucket.tokens >= cost else { return false }
        bucket.tokens -= cost
        TokenBuckets.store(bucket, at: origin, in: &budgets, rate: Self.byteRate, now: now)
        return true
    }

    func mayPark(from origin: NodeID) -> Bool {
        (parked[origin]?.count ?? 0) < Self.parkedPerOrigin && parked.values.reduce(0) { $0 + $1.count } < Self.parkedTotal
    }
}
