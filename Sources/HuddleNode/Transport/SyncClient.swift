import HuddleCore
import NIOCore
import NIOPosix

/// Pulls what this node misses of a room from one peer over TCP: sends a ``SyncRequest`` with
/// this node's version vector and reads ``SyncResponse`` batches until the peer says there is no
/// more (or the connection ends). Returned events are decoded but not yet verified.
struct SyncClient: Sendable {
    var group: any EventLoopGroup
    /// Most events asked for per response.
    var batchLimit: UInt16 = 1024
    var connectTimeout: TimeAmount = .seconds(2)

    /// Pulls until the peer has nothing more, `receive` returns `nil` (the room is no longer
    /// wanted) or a batch brings nothing new (so a peer cannot keep it asking forever), and gives
    /// up after `deadline` however far it got; anti-entropy will ask again.
    func pull(
        room: String, have: VersionVector, from me: NodeID, host: String, port: Int,
        deadline: Duration = .seconds(30),
        receive: @escaping @Sendable ([Event]) async -> VersionVector?
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await pullBatches(room: room, have: have, from: me, host: host, port: port, receive: receive)
            }
            group.addTask {
                try await Task.sleep(for: deadline)
                throw SyncError.timedOut(deadline)
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    private func pullBatches(
        room: String, have: VersionVector, from me: NodeID, host: String, port: Int,
        receive: @Sendable ([Event]) async -> VersionVector?
    ) async throws {
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(connectTimeout)
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try WireFrameCoder.addHandlers(to: channel)
                    return try NIOAsyncChannel<WireMessage, WireMessage>(wrappingChannelSynchronously: channel)
                }
            }
        try await channel.executeThenClose { inbound, outbound in
            var have = have
            func ask() async throws {
                try await outbound.write(.syncRequest(SyncRequest(from: me, room: room, have: have, limit: batchLimit)))
            }
            try await ask()
            for try await message in inbound {
                guard case .syncResponse(let response) = message, response.room == room else {
                    throw SyncError.unexpectedReply
                }
                guard let now = await receive(response.events), now != have, now.dominates(have) else { return }
                have = now
                guard response.more, !response.events.isEmpty else { return }
                try await ask()
            }
        }
    }
}

/// Why a pull ended early.
enum SyncError: Error, CustomStringConvertible {
    case unexpectedReply
    case timedOut(Duration)
    /// The peer did not send a whole request within the server's deadline.
    case tooSlow(deadline: TimeAmount)

    var description: String {
        switch self {
        case .unexpectedReply: "the peer answered a sync request with something else"
        case .timedOut(let deadline): "the pull took longer than \(deadline)"
        case .tooSlow(let deadline):
            "no whole request within \(Double(deadline.nanoseconds) / 1e9) s: the peer sends too slowly"
        }
    }
}
