import HuddleCore
import NIOCore

/// The UDP socket as a node uses it: each datagram in is decoded off the node's actor; datagrams
/// out go to IPv4 literals, fire and forget, like UDP. A datagram longer than a node ever sends
/// (``WireLimits/maxDatagramBytes``) is dropped unread. Signatures are checked later, by the
/// node, and only for events it does not already hold (``Node/screen(_:from:)``).
///
/// ```swift
/// switch DatagramEndpoint.decode(envelope) {
/// case .message(let message, let source): await node.handle(message, from: source)
/// case .sound(let window, let source): await node.handle(window, from: source)
/// case .dropped(let drop, let reason, let source): await node.countDropped(drop, reason, from: "\(source)")
/// }
/// let skipped = endpoint.send(WireMessage.events([event]).encoded(), to: peers.map(\.address))
/// ```
struct DatagramEndpoint: Sendable {
    let channel: any Channel

    /// What one received datagram turned out to be.
    enum Received: Sendable {
        /// A message to handle (events not yet verified).
        case message(WireMessage, from: PeerAddress)
        /// A datagram to relay or relayed (kind 10), with its bytes as they came.
        case relay(RelayMessage, bytes: [UInt8], from: PeerAddress)
        /// A peer's sound window (kind 11), not yet verified.
        case sound(SoundWindow, from: PeerAddress)
        /// Too long, not decodable, or of another wire version (newer or older than this one).
        case dropped(NodeCounters.Drop, reason: String, from: PeerAddress)
    }

    /// Where a datagram came from: host and port.
    static func source(of envelope: AddressedEnvelope<ByteBuffer>) -> PeerAddress {
        let remote = envelope.remoteAddress
        return PeerAddress(host: remote.ipAddress ?? "unknown", port: UInt16(clamping: remote.port ?? 0))
    }

    /// Whether the datagram says, in its envelope, that it carries events (kind 1): read before
    /// decoding, so a sender out of signature checks costs no decoding either.
    static func carriesEvents(_ envelope: AddressedEnvelope<ByteBuffer>) -> Bool {
        envelope.data.getInteger(at: envelope.data.readerIndex + 3, as: UInt8.self) == WireMessage.Kind.events.rawValue
    }

    /// Decodes a datagram.
    static func decode(_ envelope: AddressedEnvelope<ByteBuffer>) -> Received {
        let source = source(of: envelope)
        guard envelope.data.readableBytes <= WireLimits.maxDatagramBytes else {
            let reason = "a \(envelope.data.readableBytes)-byte datagram, over the \(WireLimits.maxDatagramBytes) a node sends"
            return .dropped(.oversized, reason: reason, from: source)
        }
        do {
            if RelayMessage.isRelay(envelope.data.readableBytesView) {
                let bytes = Array(envelope.data.readableBytesView)
                return .relay(try RelayMessage(decoding: bytes), bytes: bytes, from: source)
            }
            switch try Datagram(decoding: envelope.data.readableBytesView) {
            case .message(let message): return .message(message, from: source)
            case .sound(let window): return .sound(window, from: source)
            }
        } catch {
            let drop: NodeCounters.Drop =
                switch error {
                case .unsupportedVersion(let version): version > WireProtocol.version ? .newerProtocol : .olderProtocol
                default: .malformed
                }
            return .dropped(drop, reason: "\(error)", from: source)
        }
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
