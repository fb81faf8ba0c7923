import HuddleCore
import NIOCore

/// The UDP socket as a node uses it: each datagram in is decoded and its events' signatures
/// checked before the node's actor sees it (the costly part, done off the actor); datagrams out
/// go to IPv4 literals, fire and forget, like UDP. A datagram longer than a node ever sends
/// (``WireLimits/maxDatagramBytes``) is dropped unread, and an event whose signature does not
/// verify drops itself, not the others in its datagram.
///
/// ```swift
/// switch await DatagramEndpoint.decode(envelope) {
/// case .message(let message, let source, _): await node.handle(message, from: source)
/// case .dropped(let reason, let source): await node.countRejected(reason, from: "\(source)")
/// }
/// let sent = endpoint.send(WireMessage.events([event]).encoded(), to: peers.map(\.address))
/// ```
struct DatagramEndpoint: Sendable {
    let channel: any Channel

    /// What one received datagram turned out to be.
    enum Received: Sendable {
        /// A message to handle: for `events`, only those whose signatures verify;
        /// `badSignatures` counts the ones left out.
        case message(WireMessage, from: PeerAddress, badSignatures: Int)
        /// Not decodable, or an event in it is not signed by its origin; `newerProtocol` when it
        /// is from a later wire version.
        case dropped(reason: String, newerProtocol: Bool, from: PeerAddress)
    }

    /// Decodes a datagram and checks every event's signature (``SignatureCheck``).
    static func decode(_ envelope: AddressedEnvelope<ByteBuffer>) async -> Received {
        let remote = envelope.remoteAddress
        let source = PeerAddress(host: remote.ipAddress ?? "unknown", port: UInt16(clamping: remote.port ?? 0))
        guard envelope.data.readableBytes <= WireLimits.maxDatagramBytes else {
            let reason = "a \(envelope.data.readableBytes)-byte datagram, over the \(WireLimits.maxDatagramBytes) a node sends"
            return .dropped(reason: reason, newerProtocol: false, from: source)
        }
        let message: WireMessage
        do {
            message = try WireMessage(decoding: envelope.data.readableBytesView)
        } catch {
            return .dropped(reason: "\(error)", newerProtocol: error.isUnsupportedVersion, from: source)
        }
        guard case .events(let events) = message else { return .message(message, from: source, badSignatures: 0) }
        let valid = await SignatureCheck.valid(events)
        return .message(.events(valid), from: source, badSignatures: events.count - valid.count)
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
