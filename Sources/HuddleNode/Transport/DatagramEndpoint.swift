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

    /// Where a datagram came from: host and port.
    static func source(of envelope: AddressedEnvelope<ByteBuffer>) -> PeerAddress {
        let remote = envelope.remoteAddress
        return PeerAddress(host: remote.ipAddress ?? "unknown", port: UInt16(clamping: remote.port ?? 0))
    }

    /// Sends one datagram of `bytes` to each address and returns the addresses it could not be
    /// sent to. Peers are addressed by IPv4 literal only: the socket is IPv4, and a write NIO
    /// cannot recover from (wrong address family, no route) would close it. Host names are
    /// resolved once, when a seed is given, never per datagram.
    func send(_ bytes: [UInt8], to addresses: [PeerAddress]) -> [PeerAddress] {
        let payload = ByteBuffer(bytes: bytes)
        var skipped: [PeerAddress] = []
        for address in addresses {
            guard let remote = try? SocketAddress(ipAddress: address.host, port: Int(address.port)), case .v4 = remote
            else {
                skipped.append(address)
                continue
            }
            channel.writeAndFlush(AddressedEnvelope(remoteAddress: remote, data: payload), promise: nil)
        }
        return skipped
    }
}
