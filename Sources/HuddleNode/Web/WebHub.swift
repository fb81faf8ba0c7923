import Foundation
import HuddleCore
import Logging
import Synchronization

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

    /// One message from a page on its way to a session (``PageHandshake``), under the lock the
    /// pairing is kept under: a device paired is kept in the store (through the writer:
    /// committed within a commit's time).
    func handshake(
        _ handshake: inout PageHandshake, _ frame: PageFrame, now: MonotonicTime, wall: WallTime
    ) -> [PageHandshake.Step] {
        let steps = state.withLock { state in
            handshake.receive(frame, pairing: &state.pairing, now: now, wall: wall, random: Self.randomBytes)
        }
        for case .paired(let device) in steps { writer.enqueue([.webDevice(device)]) }
        return steps
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
