import Foundation
import HuddleCore
import Logging
import Synchronization

/// What a paired page asks the node to do (docs/WEB.md, "Sealed messages"), timed when it
/// reached the node (a mark with the link's one-way delay, which the machine takes off).
enum WebInput: Sendable, Equatable {
    case line(String, at: WallTime)
    /// A tap on Now, arrived at `at`, the link's one-way delay ago (``LinkDelay``).
    case mark(label: String?, at: WallTime, linkDelay: TimeSpan)
    case pause(at: WallTime)
    case resume(at: WallTime)
    case listen(Bool, at: WallTime)
    case passphrase(String?)
    /// A device was just paired: the node tells its viewer.
    case paired(name: String)
    /// The typed code on offer was guessed at too often and no longer pairs: the node tells its
    /// viewer (someone on the network is guessing).
    case codeWornOut
    /// A page opened a session: it needs the view as it stands.
    case opened
    /// A page sent a photo (its parts put together): send it, as `/photo` does a file.
    case photo([UInt8], caption: String)
    /// A page asks for the bytes of a picture shown on it (by root, 64 hex digits): answered to
    /// that session only.
    case picture(root: String, session: Int)
    /// A page's photo was refused before it reached the machine (too large, parts out of order).
    case photoRefused(String, session: Int)
}

/// What goes out to one page, in order, through its connection's sealer.
enum WebOutbound: Sendable, Equatable {
    /// A sealed message's JSON.
    case json(String)
    /// A sealed frame of bytes: a picture (``PictureFrame``).
    case bytes([UInt8])
    /// The node is done with this page: a last `bye`, then the connection closes.
    case bye(reason: String)
}

/// The page's side of the node, between the node's actor and the WebSocket connections: who is
/// paired (``WebPairing``, kept in the store), which pages are open, and what they are shown —
/// every line the node shows its viewer, numbered and kept (the last ``keptLines``) so a page
/// that slept catches up, and the latest view.
///
/// The node calls ``publish(_:)`` and ``update(view:)``; each connection ``open(device:since:)``s
/// a session and reads its outbox. Everything here is quick and under one lock.
final class WebHub: Sendable {
    /// Lines kept for pages that reconnect.
    static let keptLines = 1_000
    /// Frames a page may fall behind before it is dropped (it reconnects and catches up).
    static let outboxLimit = 256

    private struct Session {
        let device: String
        let outbox: AsyncStream<WebOutbound>.Continuation
    }

    private struct State {
        var pairing: WebPairing
        var sessions: [Int: Session] = [:]
        var nextSession = 0
        var lines: [(seq: Int, json: String)] = []
        var seq = 0
        var view: String?
    }

    private let state: Mutex<State>
    /// Where paired and revoked devices are written, as the node's other writes are.
    private let writer: StoreWriter
    private let logger: Logger
    /// Where what pages ask goes: the node.
    let inputs: @Sendable (WebInput) async -> Void

    init(writer: StoreWriter, logger: Logger, inputs: @escaping @Sendable (WebInput) async -> Void) throws {
        state = Mutex(State(pairing: WebPairing(devices: try writer.store.webDevices())))
        self.writer = writer
        self.logger = logger
        self.inputs = inputs
    }

    // MARK: Pairing

    /// Fresh codes, replacing the ones shown before.
    func offerCodes(now: MonotonicTime) -> WebPairing.Offer {
        let (typed, secret) = (Self.randomBytes(5), Self.randomBytes(16))
        return state.withLock { $0.pairing.offer(typed: typed, secret: secret, now: now) }
    }

    /// `count` bytes from the system's CSPRNG: codes, device ids, a connection's nonce.
    static func randomBytes(_ count: Int) -> [UInt8] {
        var random = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &random) }
    }

    /// A pairing attempt from `address` with the code of `kind`: the code to run CPace with, or
    /// why not (``WebPairing/begin(_:from:now:)``).
    func beginPairing(_ kind: WebPairing.CodeKind, from address: String, now: MonotonicTime) -> WebPairing.Begin {
        state.withLock { $0.pairing.begin(kind, from: address, now: now) }
    }

    /// The end of an attempt: `proven` when the page's proof was right. A device paired is kept
    /// in the store (through the writer: committed within a commit's time).
    func finishPairing(
        _ kind: WebPairing.CodeKind, code: PairingCode, proven: Bool, deviceKey: [UInt8], name: String, from address: String,
        at wall: WallTime, now: MonotonicTime
    ) -> WebPairing.Verdict {
        let id = Self.randomBytes(16)
        let verdict = state.withLock { state in
            state.pairing.finish(
                kind, code: code, proven: proven, name: name, key: deviceKey, id: id, from: address, at: wall, now: now)
        }
        if case .paired(let device, _) = verdict { writer.enqueue([.webDevice(device)]) }
        return verdict
    }

    func device(id: String) -> WebDevice? {
        state.withLock { $0.pairing.device(id: id) }
    }

    var devices: [WebDevice] { state.withLock { $0.pairing.devices } }

    /// Unpairs the device called `name`: forgotten here and in the store, and its open pages told
    /// `bye` and closed.
    func revoke(name: String) -> WebDevice? {
        let device: WebDevice? = state.withLock { state in
            guard let device = state.pairing.revoke(name: name) else { return nil }
            for (id, session) in state.sessions where session.device == device.id {
                session.outbox.yield(.bye(reason: "revoked"))
                session.outbox.finish()
                state.sessions[id] = nil
            }
            return device
        }
        if let device { writer.enqueue([.webDeviceRevoked(id: device.id)]) }
        return device
    }

    // MARK: Sessions

    /// Opens a session for `device`: its outbox holds, first, the lines after `since` still kept
    /// (all kept lines for a page that never showed one), then the view, then everything as it
    /// happens. `nil` if the device is not paired (any more).
    func open(device: String, since: Int) -> (session: Int, outbox: AsyncStream<WebOutbound>)? {
        state.withLock { state in
            guard state.pairing.device(id: device) != nil else { return nil }
            let (outbox, continuation) = AsyncStream.makeStream(
                of: WebOutbound.self, bufferingPolicy: .bufferingOldest(Self.outboxLimit + Self.keptLines))
            for line in state.lines where line.seq > since {
                continuation.yield(.json(ToPage.line(seq: line.seq, json: line.json).json))
            }
            if let view = state.view { continuation.yield(.json(view)) }
            let id = state.nextSession
            state.nextSession += 1
            state.sessions[id] = Session(device: device, outbox: continuation)
            return (id, outbox)
        }
    }

    func close(session: Int) {
        state.withLock { $0.sessions.removeValue(forKey: session)?.outbox.finish() }
    }

    /// Whether any page is open: the node skips making views nobody sees.
    var isWatched: Bool { state.withLock { !$0.sessions.isEmpty } }

    /// A line the node showed its viewer, as `huddle run --json` writes it.
    func publish(_ json: String) {
        state.withLock { state in
            state.seq += 1
            state.lines.append((state.seq, json))
            if state.lines.count > Self.keptLines { state.lines.removeFirst(state.lines.count - Self.keptLines) }
            Self.send(.json(ToPage.line(seq: state.seq, json: json).json), in: &state)
        }
    }

    /// The view as it stands (a `view` message), sent when it changed.
    func update(view: String) {
        state.withLock { state in
            guard state.view != view else { return }
            state.view = view
            Self.send(.json(view), in: &state)
        }
    }

    /// Something for one session only (a `pong`, an `ask_passphrase` goes to all).
    func send(_ json: String, to session: Int) {
        state.withLock { state in
            guard let outbox = state.sessions[session]?.outbox else { return }
            if case .dropped = outbox.yield(.json(json)) { Self.drop(session, in: &state) }
        }
    }

    /// Something for every open page.
    func broadcast(_ json: String) {
        state.withLock { Self.send(.json(json), in: &$0) }
    }

    /// A picture for every open page (not kept: a page that reconnects asks for what it shows).
    func broadcast(bytes: [UInt8]) {
        state.withLock { Self.send(.bytes(bytes), in: &$0) }
    }

    /// A picture for one page, which asked for it.
    func send(bytes: [UInt8], to session: Int) {
        state.withLock { state in
            guard let outbox = state.sessions[session]?.outbox else { return }
            if case .dropped = outbox.yield(.bytes(bytes)) { Self.drop(session, in: &state) }
        }
    }

    private static func send(_ item: WebOutbound, in state: inout State) {
        for (id, session) in state.sessions {
            if case .dropped = session.outbox.yield(item) { drop(id, in: &state) }
        }
    }

    /// A page too far behind: its outbox ends, its connection closes, and it catches up when it
    /// reconnects.
    private static func drop(_ session: Int, in state: inout State) {
        state.sessions.removeValue(forKey: session)?.outbox.finish()
    }

    /// Tells every page the node stops.
    func stop() {
        state.withLock { state in
            for session in state.sessions.values {
                session.outbox.yield(.bye(reason: "the node stopped"))
                session.outbox.finish()
            }
            state.sessions = [:]
        }
    }
}
