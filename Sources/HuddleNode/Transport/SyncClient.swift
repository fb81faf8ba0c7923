import HuddleCore
import NIOCore
import NIOPosix

/// Carries one pull over TCP: sends the ``SyncRequest`` the machine made and hands each
/// ``SyncResponse`` batch back, sending whatever request it is answered with, until it is
/// answered with none (the machine decides: `NodeMachine+Pulls`) or the connection ends.
/// Returned events are decoded but not yet verified.
struct SyncClient: Sendable {
    var group: any EventLoopGroup
    var connectTimeout: TimeAmount = .seconds(2)

    /// Runs the pull that starts with `first`, and gives up after `deadline` however far it got;
    /// anti-entropy will ask again. `receive` gets each batch's events and whether the peer has
    /// more, and returns the next request, or `nil` to end the pull.
    func pull(
        _ first: SyncRequest, host: String, port: Int, deadline: Duration = .seconds(30),
        receive: @escaping @Sendable (_ events: [Event], _ more: Bool) async -> SyncRequest?
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await pullBatches(first, host: host, port: port, receive: receive)
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
        _ first: SyncRequest, host: String, port: Int,
        receive: @Sendable ([Event], Bool) async -> SyncRequest?
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
            try await outbound.write(.syncRequest(first))
            for try await message in inbound {
                guard case .syncResponse(let response) = message, response.room == first.room else {
                    throw SyncError.unexpectedReply
                }
                guard let next = await receive(response.events, response.more) else { return }
                try await outbound.write(.syncRequest(next))
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
