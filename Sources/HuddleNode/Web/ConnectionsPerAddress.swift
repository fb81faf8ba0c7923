import NIOCore
import Synchronization

/// Caps the page server's TCP connections from one address: a machine that opens a thousand and
/// leaves them idle holds a few of them, and a phone still gets in. Each connection's handler
/// counts it in when added to its pipeline, closes it at once past the cap, and counts it out
/// when it closes (however it closes: the WebSocket upgrade removes HTTP's handlers).
final class ConnectionsPerAddress: Sendable {
    let limit: Int
    private let open = Mutex<[String: Int]>([:])

    init(limit: Int) {
        self.limit = limit
    }

    /// A new handler for one connection's pipeline.
    func handler() -> Gate { Gate(table: self) }

    fileprivate func admit(_ address: String) -> Bool {
        open.withLock { open in
            guard open[address, default: 0] < limit else { return false }
            open[address, default: 0] += 1
            return true
        }
    }

    fileprivate func release(_ address: String) {
        open.withLock { open in
            open[address, default: 1] -= 1
            if open[address] == 0 { open[address] = nil }
        }
    }

    /// How many connections `address` holds now.
    func count(of address: String) -> Int { open.withLock { $0[address, default: 0] } }

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
