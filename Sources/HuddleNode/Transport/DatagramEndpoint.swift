import HuddleCore
import NIOCore

/// The UDP socket as a node uses it: each datagram in goes to the node's machine as bytes, with
/// its source (the machine admits, decodes and checks it: `NodeMachine+Admission`); datagrams out
/// go to IPv4 literals, fire and forget, like UDP.
///
/// ```swift
/// await node.take(Array(envelope.data.readableBytesView), from: DatagramEndpoint.source(of: envelope))
/// let skipped = endpoint.send(WireMessage.events([event]).encoded(), to: peers.map(\.address))
/// ```
struct DatagramEndpoint: Sendable {
    let channel: any Channel
    /// Sends on the channel's socket from the caller's thread (``DatagramSender``); without one,
    /// every datagram goes through the channel.
    var sender: DatagramSender?
    /// Asked before a send through the channel: an address the kernel will not send to would
    /// close it.
    let routes = RouteCheck()

    /// Where a datagram came from: host and port.
    static func source(of envelope: AddressedEnvelope<ByteBuffer>) -> PeerAddress {
        let remote = envelope.remoteAddress
        return PeerAddress(host: remote.ipAddress ?? "unknown", port: UInt16(clamping: remote.port ?? 0))
    }

    /// Sends one datagram of `bytes` to each address and returns those it was not sent to, with
    /// why. Peers are addressed by IPv4 literal only: the socket is IPv4, and a write NIO cannot
    /// recover from (the wrong address family; no route, a broadcast address: ``RouteCheck``)
    /// would close it. Host names are resolved once, when a seed is given, never per datagram.
    ///
    /// With a ``sender``, each datagram leaves at once from the caller's thread; only one the
    /// socket cannot take now goes through the channel, which queues it.
    func send(_ bytes: [UInt8], to addresses: [PeerAddress]) -> [(PeerAddress, Unsent)] {
        var payload: ByteBuffer?
        var skipped: [(PeerAddress, Unsent)] = []
        for address in addresses {
            guard let remote = try? SocketAddress(ipAddress: address.host, port: Int(address.port)), case .v4 = remote
            else {
                skipped.append((address, .notIPv4))
                continue
            }
            switch sender?.send(bytes, to: remote) {
            case .sent?:
                continue
            case .refused(let errno)?:
                skipped.append((address, .refused(errno: errno)))
                continue
            case .busy?, nil:
                break
            }
            if let errno = routes.refusal(to: remote) {
                skipped.append((address, .refused(errno: errno)))
                continue
            }
            if payload == nil { payload = ByteBuffer(bytes: bytes) }
            channel.writeAndFlush(AddressedEnvelope(remoteAddress: remote, data: payload!), promise: nil)
        }
        return skipped
    }

    /// Why a datagram was not sent.
    enum Unsent: Equatable {
        /// Not an IPv4 literal.
        case notIPv4
        /// The kernel would not send it there (`ENETUNREACH`, `EACCES`, `EPERM`, …).
        case refused(errno: Int32)
    }
}
