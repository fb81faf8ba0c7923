import HuddleCore
import NIOCore
import Synchronization

/// One WebSocket from a page (docs/WEB.md): the bytes of a ``PageHandshake`` and then of a
/// ``PageSession``, both decided in the core. The page has ``PageHandshake/timeAllowed`` to pair or
/// to open a session, or the connection closes; it then talks only in sealed frames, and the
/// first frame that does not open ends it.
struct WebConnection {
    /// Largest frame read; a bigger one closes the connection.
    static let maximumFrame = 16 * 1024
    /// How often the node pings an open page, to time its link.
    static let pingEvery = Duration.seconds(2)

    let hub: WebHub
    let clock: any NodeClock
    let channel: any Channel
    /// Where the connection's seat is kept: a session needs one of its own.
    let admission: WebAdmission

    /// Closes the connection when `deadline` comes, unless cancelled first.
    private func closing(at deadline: MonotonicTime) -> Task<Void, Never> {
        let wait = Duration.microseconds(max(0, (deadline - clock.monotonic()).microseconds))
        return Task { [channel] in
            try? await Task.sleep(for: wait)
            if !Task.isCancelled { channel.close(promise: nil) }
        }
    }

    func serve(_ messages: WebSocketMessages, _ outbound: WebSocketWriter) async {
        var messages = messages
        do {
            guard let opened = try await handshake(&messages, outbound) else {
                try? await outbound.close(.policyViolation, reason: nil)
                return
            }
            guard admission.open(channel) else {
                try? await outbound.close(.policyViolation, reason: "too many pages open")
                return
            }
            try await session(opened, &messages, outbound)
        } catch {
            // The page went away, or sent what is not a message: nothing to answer.
        }
        channel.close(promise: nil)
    }

    static func frame(_ message: WebSocketMessage) -> PageFrame {
        switch message {
        case .text(let text): .text(Array(text.utf8))
        case .binary(let buffer): .binary(Array(buffer: buffer))
        }
    }

    // MARK: Before the session

    /// The page's messages through a ``PageHandshake`` until it opens a session (`nil`: refused,
    /// said why to the page, or timed out).
    private func handshake(_ messages: inout WebSocketMessages, _ outbound: WebSocketWriter) async throws
        -> PageHandshake.Opened?
    {
        var handshake = PageHandshake(from: channel.remoteAddress?.ipAddress ?? "?", now: clock.monotonic())
        var timer = closing(at: handshake.deadline)
        defer { timer.cancel() }
        while let message = try await messages.next() {
            let deadline = handshake.deadline
            for step in hub.handshake(&handshake, Self.frame(message), now: clock.monotonic(), wall: clock.wall()) {
                switch step {
                case .reply(let reply): try await outbound.write(.text(ToPage(reply).json))
                case .paired(let device): await hub.inputs(.paired(name: device.name))
                case .codeWornOut: await hub.inputs(.codeWornOut)
                }
            }
            if let opened = handshake.opened { return opened }
            if handshake.isClosed { return nil }
            if handshake.deadline != deadline {
                timer.cancel()
                timer = closing(at: handshake.deadline)
            }
        }
        return nil
    }

    // MARK: The session

    private func session(
        _ opened: PageHandshake.Opened, _ messages: inout WebSocketMessages, _ outbound: WebSocketWriter
    ) async throws {
        guard let (number, outbox) = hub.open(device: opened.device.id, since: opened.since) else { return }
        defer { hub.close(session: number) }
        await hub.inputs(.opened)
        let session = SharedSession(PageSession(opened, number: number))
        try await withThrowingTaskGroup(of: Void.self) { group in
            // Out: the outbox, sealed in order; a `bye` ends it.
            group.addTask { [channel] in
                var sealer = opened.sealer
                for await item in outbox {
                    switch item {
                    case .json(let json):
                        try await outbound.write(.binary(ByteBuffer(bytes: sealer.seal(Array(json.utf8)))))
                    case .bytes(let bytes):
                        try await outbound.write(.binary(ByteBuffer(bytes: sealer.seal(bytes))))
                    case .bye(let reason):
                        let bye = ToPage.bye(reason: reason).json
                        try await outbound.write(.binary(ByteBuffer(bytes: sealer.seal(Array(bye.utf8)))))
                        try? await outbound.close(.normalClosure, reason: reason)
                        channel.close(promise: nil)
                        return
                    }
                }
                channel.close(promise: nil)  // dropped for falling behind, or closed
            }
            // Pings: five quickly, then every two seconds.
            group.addTask { [hub, clock] in
                for round in 0... {
                    let id = session.state.withLock { $0.ping(now: clock.monotonic()) }
                    hub.send(ToPage.ping(id: id).json, to: number)
                    try await Task.sleep(for: round < 5 ? .milliseconds(200) : Self.pingEvery)
                }
            }
            // In: each frame opened and acted on.
            reading: while let message = try await messages.next() {
                let (arrived, now) = (clock.wall(), clock.monotonic())
                switch session.state.withLock({ $0.receive(Self.frame(message), arrived: arrived, now: now) }) {
                case .input(let input): await hub.inputs(input)
                case .pong(let id): hub.send(ToPage.pong(id: id).json, to: number)
                case .nothing: break
                case .close: break reading
                }
            }
            group.cancelAll()
        }
    }

    /// The session, shared by the pinging task and the reader: the link's timing is in it.
    private final class SharedSession: Sendable {
        let state: Mutex<PageSession>
        init(_ session: PageSession) { state = Mutex(session) }
    }
}
