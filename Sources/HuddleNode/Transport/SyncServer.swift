import HuddleCore
import NIOCore
import Synchronization

/// Serves pulls: answers each ``SyncRequest`` on a TCP connection with a ``SyncResponse``, and
/// each ``PieceRequest`` with a ``Piece`` of a picture's blob, within limits a peer cannot stretch:
/// - at most ``ConnectionCaps/sync`` at once, in all and from one address (the node's one table
///   of caps), so a peer that holds its share still leaves slots for everyone else;
/// - each request must arrive whole within ``requestDeadline`` of the connection opening or of
///   the previous response (``ProgressDeadlineHandler``): a peer trickling bytes is cut off;
/// - ``connectionLifetime`` at most per connection (a pull gives up after 30 s anyway);
/// - a frame over ``WireLimits/maxSyncRequestBytes`` (41 066 bytes, the largest request) closes
///   the connection before it is buffered: at most as many such buffers as connections.
///
/// ```swift
/// let server = SyncServer(respond: { await node.syncResponse(to: $0) }, reject: { ... })
/// for try await connection in listener { tasks.addTask { await server.serve(connection) } }
/// ```
final class SyncServer: Sendable {
    /// Longest a peer may take to send a whole request.
    static let requestDeadline = TimeAmount.seconds(5)
    /// Longest a peer may keep one TCP connection.
    static let connectionLifetime = TimeAmount.seconds(60)

    /// The answer to a request (from the node's log).
    private let respond: @Sendable (SyncRequest) async -> SyncResponse
    /// The answer to a request for a piece of a picture's blob (from disk, off the node's actor).
    private let piece: @Sendable (PieceRequest) async -> Piece
    /// Counts and logs a refused connection or a broken one: why, and the peer's address.
    private let reject: @Sendable (_ drop: NodeCounters.Drop, _ reason: String, _ peer: String) async -> Void
    /// Connections open, by remote address (host only).
    private let open = Mutex(OpenConnections(cap: ConnectionCaps.sync))

    init(
        respond: @escaping @Sendable (SyncRequest) async -> SyncResponse,
        piece: @escaping @Sendable (PieceRequest) async -> Piece = { Piece(root: $0.root, index: $0.index, bytes: []) },
        reject: @escaping @Sendable (_ drop: NodeCounters.Drop, _ reason: String, _ peer: String) async -> Void
    ) {
        self.respond = respond
        self.piece = piece
        self.reject = reject
    }

    /// Serves one accepted connection (auto-read off, nothing in its pipeline) until the peer
    /// closes it, it breaks the protocol, it is too slow, or its lifetime ends; then closes it.
    func serve(_ channel: any Channel) async {
        let peer = channel.remoteAddress.map { "\($0)" } ?? "unknown"
        let host = channel.remoteAddress?.ipAddress ?? "unknown"
        let refusal: String? =
            switch open.withLock({ $0.admit(host) }) {
            case .full: "too many sync connections"
            case .addressFull: "too many sync connections from \(host)"
            case nil: nil
            }
        if let refusal {
            channel.close(promise: nil)
            await reject(.syncBusy, refusal, peer)
            return
        }
        // The lifetime is a timer on the channel's event loop, cancelled as the connection ends:
        // a cancelled `Task.sleep` keeps its timer (~0.7 kB) until the sleep would have ended, so
        // a churn of short connections once held a minute of them (40 → 275 MB in 30 s).
        let lifetime = channel.eventLoop.scheduleTask(in: Self.connectionLifetime) { channel.close(promise: nil) }
        await answer(on: channel, peer: peer)
        lifetime.cancel()
        channel.close(promise: nil)
        open.withLock { $0.release(host) }
    }

    /// Answers requests until the peer closes the connection.
    private func answer(on channel: any Channel, peer: String) async {
        do {
            let connection = try await channel.eventLoop.submit {
                try WireFrameCoder.addHandlers(to: channel, maxInboundFrameBytes: WireLimits.maxSyncRequestBytes)
                try channel.pipeline.syncOperations.addHandler(ProgressDeadlineHandler(.requestAfterResponse(Self.requestDeadline)))
                let connection = try NIOAsyncChannel<WireMessage, WireMessage>(wrappingChannelSynchronously: channel)
                try channel.syncOptions?.setOption(.autoRead, value: true)
                return connection
            }.get()
            try await connection.executeThenClose { inbound, outbound in
                for try await message in inbound {
                    switch message {
                    case .syncRequest(let request): try await outbound.write(.syncResponse(await respond(request)))
                    case .pieceRequest(let request): try await outbound.write(.piece(await piece(request)))
                    default: throw SyncError.unexpectedReply
                    }
                }
            }
        } catch {
            await reject(.syncBroken, "sync connection: \(error)", peer)
        }
    }
}
