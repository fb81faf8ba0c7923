import HuddleCore
import NIOCore
import Synchronization

/// Serves pulls: answers each ``SyncRequest`` on a TCP connection with a ``SyncResponse``,
/// within limits a peer cannot stretch: at most ``maximumConnections`` at once and
/// ``connectionLifetime`` each (a pull gives up after 30 s anyway), so a peer that connects and
/// goes silent holds nothing for long.
///
/// ```swift
/// let server = SyncServer(respond: { await node.syncResponse(to: $0) }, reject: { ... })
/// for try await connection in listener { tasks.addTask { await server.serve(connection) } }
/// ```
final class SyncServer: Sendable {
    /// Most TCP connections served at once; a home network has a handful of peers.
    static let maximumConnections = 32
    /// Longest a peer may keep one TCP connection.
    static let connectionLifetime = Duration.seconds(60)

    /// The answer to a request (from the node's log).
    private let respond: @Sendable (SyncRequest) async -> SyncResponse
    /// Counts and logs a refused connection or a broken one: why, and the peer's address.
    private let reject: @Sendable (_ reason: String, _ peer: String) async -> Void
    private let open = Mutex(0)

    init(
        respond: @escaping @Sendable (SyncRequest) async -> SyncResponse,
        reject: @escaping @Sendable (_ reason: String, _ peer: String) async -> Void
    ) {
        self.respond = respond
        self.reject = reject
    }

    /// Serves one accepted connection (auto-read off, nothing in its pipeline) until the peer
    /// closes it, it breaks the protocol, or its lifetime ends; then closes it.
    func serve(_ channel: any Channel) async {
        let peer = channel.remoteAddress.map { "\($0)" } ?? "unknown"
        let admitted = open.withLock { count in
            guard count < Self.maximumConnections else { return false }
            count += 1
            return true
        }
        guard admitted else {
            channel.close(promise: nil)
            await reject("too many sync connections", peer)
            return
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.answer(on: channel, peer: peer) }
            group.addTask { try? await Task.sleep(for: Self.connectionLifetime) }
            await group.next()
            group.cancelAll()
        }
        channel.close(promise: nil)
        open.withLock { $0 -= 1 }
    }

    /// Answers requests until the peer closes the connection.
    private func answer(on channel: any Channel, peer: String) async {
        do {
            let connection = try await channel.eventLoop.submit {
                try WireFrameCoder.addHandlers(to: channel)
                let connection = try NIOAsyncChannel<WireMessage, WireMessage>(wrappingChannelSynchronously: channel)
                try channel.syncOptions?.setOption(.autoRead, value: true)
                return connection
            }.get()
            try await connection.executeThenClose { inbound, outbound in
                for try await message in inbound {
                    guard case .syncRequest(let request) = message else { throw SyncError.unexpectedReply }
                    try await outbound.write(.syncResponse(await respond(request)))
                }
            }
        } catch {
            await reject("sync connection: \(error)", peer)
        }
    }
}
