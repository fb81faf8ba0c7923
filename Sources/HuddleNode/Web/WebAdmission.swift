import HuddleCore
import NIOCore
import Synchronization

/// The page server's seats (``WebSeats``) on real connections: each connection is seated as it is
/// accepted (``Gate``, the first handler of its pipeline), a WebSocket as it upgrades and as it
/// opens a session; a connection that loses its seat to a newcomer is closed, and every seat is
/// given back when its connection closes, however it closes.
///
/// Until it opens a session, a connection lives at most ``unprovenLifetime`` from when it was
/// accepted, whatever it sends: an idle timer that each byte resets let connections trickling a
/// header byte every 5 s hold their seats for good (issue 45).
final class WebAdmission: Sendable {
    /// How long a connection may go without opening a session: page loads take a second, a
    /// pairing well under the WebSocket's own 10 s deadline.
    static let unprovenLifetime = TimeAmount.seconds(20)

    private struct State {
        var seats: WebSeats
        var channels: [Int: any Channel] = [:]
        var ids: [ObjectIdentifier: Int] = [:]
        var next = 0
    }

    private let state: Mutex<State>

    init(limits: WebSeats.Limits = WebSeats.Limits()) {
        state = Mutex(State(seats: WebSeats(limits: limits)))
    }

    /// A new handler for one connection's pipeline.
    func gate() -> Gate { Gate(admission: self) }

    /// Seats a connection just accepted; `false`: it is closed.
    private func accept(_ channel: any Channel) -> Bool {
        let address = channel.remoteAddress?.ipAddress ?? "?"
        let (id, verdict, evicted): (Int, WebSeats.Verdict, (any Channel)?) = state.withLock { state in
            let id = state.next
            state.next += 1
            let verdict = state.seats.accept(id, from: address)
            guard case .admitted(let evicting) = verdict else { return (id, verdict, nil) }
            state.channels[id] = channel
            state.ids[ObjectIdentifier(channel)] = id
            return (id, verdict, evicting.flatMap { state.channels.removeValue(forKey: $0) })
        }
        evicted?.close(promise: nil)
        guard case .admitted = verdict else { return false }
        channel.closeFuture.whenComplete { [self] _ in
            state.withLock { state in
                state.seats.close(id)
                state.channels[id] = nil
                state.ids[ObjectIdentifier(channel)] = nil
            }
        }
        channel.eventLoop.scheduleTask(in: Self.unprovenLifetime) { [self] in
            let proven = state.withLock { $0.seats.stage(of: id) == .session }
            if !proven { channel.close(promise: nil) }
        }
        return true
    }

    /// A WebSocket upgrade on `channel`: `false`, refused (``AnswerRefusedUpgrades`` answers 400).
    func upgrade(_ channel: any Channel) -> Bool {
        let (verdict, evicted): (WebSeats.Verdict, (any Channel)?) = state.withLock { state in
            guard let id = state.ids[ObjectIdentifier(channel)] else { return (.refused, nil) }
            let verdict = state.seats.upgrade(id)
            guard case .admitted(let evicting?) = verdict else { return (verdict, nil) }
            return (verdict, state.channels.removeValue(forKey: evicting))
        }
        evicted?.close(promise: nil)
        return verdict != .refused
    }

    /// Closes every connection seated (but open sessions, with `keepingSessions`): the server stops.
    func closeAll(keepingSessions: Bool = false) {
        let closing = state.withLock { state in
            state.channels.filter { id, _ in !keepingSessions || state.seats.stage(of: id) != .session }.values
        }
        for channel in closing { channel.close(promise: nil) }
    }

    /// The WebSocket on `channel` proved a paired device: `false` when the sessions are all taken.
    func open(_ channel: any Channel) -> Bool {
        state.withLock { state in
            guard let id = state.ids[ObjectIdentifier(channel)] else { return false }
            return state.seats.open(id)
        }
    }

    /// Seats a connection when it is added to its pipeline, or closes it at once.
    final class Gate: ChannelInboundHandler, RemovableChannelHandler, Sendable {
        typealias InboundIn = NIOAny
        let admission: WebAdmission

        init(admission: WebAdmission) {
            self.admission = admission
        }

        func handlerAdded(context: ChannelHandlerContext) {
            if !admission.accept(context.channel) { context.close(promise: nil) }
        }
    }
}
