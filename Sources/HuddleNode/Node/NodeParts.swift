import HuddleCore

/// Work handed from the node's actor to a task that runs it (pulls, picture fetches): an
/// unbounded stream the task reads, and its end the actor writes to.
struct WorkQueue<Item: Sendable>: Sendable {
    let items: AsyncStream<Item>
    let sink: AsyncStream<Item>.Continuation

    init() {
        (items, sink) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }
}

/// What the machine asks to fetch from peers, run off the actor: pulls (the queue
/// ``Node/pullLoop(group:)`` runs them from, and the machine's word each running pull waits for,
/// ``Node/PullStep``) and pictures' blobs (``Node/pictureLoop(group:)``).
struct NodeFetches {
    let pulls = WorkQueue<(PullRequest, first: SyncRequest)>()
    var waiting: [PullRequest: CheckedContinuation<Node.PullStep, Never>] = [:]
    let pictures = WorkQueue<PictureFetch>()
}

/// What the console was shown of pictures, and what the node keeps on disk of them.
struct ShownPictures {
    /// In order: `/open N` opens the Nth.
    var atConsole: [Picture] = []
    /// Bytes of pictures on disk as last counted, plus what was kept since
    /// (``Node/keptPicture(_:)``); `nil` until first counted.
    var bytesOnDisk: Int?
    /// Whether the console was told which library previews need.
    var toldPreviewLibrary = false
}

/// Commits under way, by turn: each tells the machine when its writes are on disk, and the
/// machine lets out what waited for them (``CommitGate``); and what the turns a control request
/// waits for showed the reader (``Node/stepShowing(_:)``).
struct CommitsUnderWay {
    var tasks: [CommitTurn: Task<Void, Never>] = [:]
    var showing: [CommitTurn: [NodeOutput]] = [:]
    /// Whether what a turn shows is kept though no request waits for it yet: a request's own
    /// turn may land in the journal and come out before it knows its turn.
    var keepShowing = false
    /// Turns whose writes landed in the journal, to let out (``Node/carryOut(_:)``).
    var landed: [CommitTurn] = []
    /// The last writes the journal holds, handed to the writer: once they are committed, the
    /// journal may be emptied.
    var lastJournaled: StoreWriter.Handed?
}

/// What the node hears, while it listens (`--listen`, `--audio-file`, `/listen`), and the tasks
/// around it.
struct NodeListening {
    var session: ListeningSession?
    /// The task reading the session's reports.
    var reading: Task<Void, Never>?
    /// The latest `/listen` or `/listen off` being carried out (the next waits for it).
    var request: Task<Void, Never>?
}

/// How this run is going, for how it ends: what stopped it, and what its end waits for.
struct RunState {
    /// mDNS said it cannot work here (no daemon): only seeds and gossip find peers.
    var mdnsUnavailable = false
    /// `/quit` was typed.
    var quitRequested = false
    /// Once piped input ended: how the wait for delivery ended, and the run waiting to hear it
    /// (``Node/waitForDelivery()``).
    var deliveryEnded: RunOutcome?
    var deliveryWaiter: CheckedContinuation<Void, Never>?
    /// How many events the node held when it last gave freed memory back (``ProcessMemory``), and
    /// at the timer's last turn.
    var heldAtGiveBack = 0
    var heldAtLastTick = 0
    /// The last run of piped chat lines, while its commit may still be under way: the next run
    /// is signed meanwhile (``Node/linesArrived(_:at:)``).
    var pipedTurn: CommitTurn?
}
