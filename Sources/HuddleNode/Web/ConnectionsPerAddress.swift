import NIOCore
import Synchronization

/// Caps the page server's connections from one address (and, if given, in all): a machine that
/// opens a thousand and leaves them idle holds a few of them, and a phone still gets in. Used
/// twice: for TCP connections, where each connection's ``Gate`` counts it in when added to its
/// pipeline, closes it at once past the cap, and counts it out when it closes (however it closes:
/// the WebSocket upgrade removes HTTP's handlers); and for WebSockets, admitted at the upgrade.
final class ConnectionsPerAddress: Sendable {
    let limit: Int
    let total: Int
    private let open = Mutex<(all: Int, from: [String: Int])>((0, [:]))

    init(limit: Int, total: Int = .max) {
        self.limit = limit
        self.total = total
    }

    /// A new handler for one connection's pipeline.
    func handler() -> Gate { Gate(table: self) }

    /// Counts a connection from `address` in; `false` (and nothing counted) past either cap.
    func admit(_ address: String) -> Bool {
        open.withLock { open in
            guard open.all < total, open.from[address, default: 0] < limit else { return false }
            open.all += 1
            open.from[address, default: 0] += 1
            return true
        }
    }

    /// Counts a connection ``admit(_:)`` let in out again.
    func release(_ address: String) {
        open.withLock { open in
            open.all -= 1
            open.from[address, default: 1] -= 1
            if open.from[address] == 0 { open.from[address] = nil }
        }
    }

    final class Gate: ChannelInboundHandler, RemovableChannelHandler, Sendable {
        typealias InboundIn = NIOAny
        let table: ConnectionsPerAddress

        init(table: ConnectionsPerAddress) {
            self.table = table
        }

        func handlerAdded(context: ChannelHandlerContext) {
            let address = context.channel.remoteAddress?.ipAddress ?? "?"
            guard table.admit(address) else {
                context.close(promise: nil)
                return
            }
            let table = table
            context.channel.closeFuture.whenComplete { _ in table.release(address) }
        }
    }
}
