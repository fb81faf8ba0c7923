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

    func pull(
        room: String, have: VersionVector, from me: NodeID, host: String, port: Int,
        receive: @Sendable ([Event]) async -> VersionVector
    ) async throws {
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(connectTimeout)
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        try await channel.executeThenClose { inbound, outbound in
            var have = have
            var splitter = FrameSplitter()
            func ask() async throws {
                let request = WireMessage.syncRequest(SyncRequest(from: me, room: room, have: have, limit: batchLimit))
                try await outbound.write(ByteBuffer(bytes: WireFrame.encode(request)))
            }
            try await ask()
            for try await chunk in inbound {
                for payload in try splitter.append(chunk.readableBytesView) {
                    guard case .syncResponse(let response) = try WireMessage(decoding: payload),
                        response.room == room
                    else { throw SyncError.unexpectedReply }
                    have = await receive(response.events)
                    guard response.more, !response.events.isEmpty else { return }
                    try await ask()
                }
            }
        }
    }
}

/// Why a pull ended early.
enum SyncError: Error, CustomStringConvertible {
    case unexpectedReply

    var description: String { "the peer answered a sync request with something else" }
}
