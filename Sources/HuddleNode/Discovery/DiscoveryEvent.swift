public import HuddleCore

/// A Huddle node found on the LAN over DNS-SD: its advertisement, where to reach it, and the
/// service instance it came from.
///
/// A node seen on several interfaces or over both IPv4 and IPv6 is still one peer: discovery
/// keys peers by ``id`` and picks one address deterministically (IPv4 first, then the lowest
/// interface index).
///
/// ```swift
/// case .found(let peer):
///     print("\(peer.nick) at \(peer.host):\(peer.port) in \(peer.rooms)")  // bob at 192.0.2.12:7700 in ["superbowl"]
/// ```
public struct DiscoveredPeer: Hashable, Sendable {
    /// The node's id, from its TXT record.
    public var id: NodeID
    /// The node's display name.
    public var nick: String
    /// The rooms the node advertises (possibly a prefix of the rooms it is in).
    public var rooms: [String]
    /// The wire protocol version it speaks (`proto`).
    public var protocolVersion: Int
    /// An IP address literal: `192.0.2.12`, or for an IPv6 link-local address one with its zone,
    /// `fe80::1c83:f8ff:fee1:40f8%eth0`. IPv6 is used only when the host has no IPv4 address.
    public var host: String
    /// The node's port (TCP and UDP).
    public var port: UInt16
    /// The DNS-SD service instance name, such as `bob (aabbccddeeff)`.
    public var instanceName: String

    /// Makes a peer from its parts (discovery makes them; tests and tools may too).
    public init(
        id: NodeID, nick: String, rooms: [String], protocolVersion: Int, host: String, port: UInt16,
        instanceName: String
    ) {
        self.id = id
        self.nick = nick
        self.rooms = rooms
        self.protocolVersion = protocolVersion
        self.host = host
        self.port = port
        self.instanceName = instanceName
    }
}

/// What ``ServiceDiscovery`` reports.
///
/// The first event says whether discovery works (``available`` or ``unavailable(_:)``); then
/// peers come and go. When the mDNS daemon goes away, every peer found so far is reported
/// ``lost(_:)`` before ``unavailable(_:)``; when it is back, ``available`` is reported and the
/// peers are found again.
///
/// ```swift
/// for await event in discovery.start(advertising: ad) {
///     switch event {
///     case .found(let peer): membership.addDiscovered(id: peer.id, nick: peer.nick, address: ..., rooms: peer.rooms, now: now)
///     case .lost(let id): print("\(id) left")
///     case .unavailable(let why): print(why)   // "discovery is off: no mDNS daemon answered ..."
///     case .available: print("discovery is on")
///     }
/// }
/// ```
public enum DiscoveryEvent: Hashable, Sendable {
    /// A node appeared, or something about it changed (address, nick, rooms, ...). The peer
    /// replaces whatever was reported before for the same id.
    case found(DiscoveredPeer)
    /// The node is no longer advertised (it said goodbye, or discovery went off).
    case lost(NodeID)
    /// Discovery is off, with a message for people saying why and what to do. Reported once per
    /// outage; discovery keeps retrying quietly in the background.
    case unavailable(String)
    /// Discovery is on: the node is browsing (and advertising, if asked to).
    case available
    /// No other node was found in ``DiscoveryConfiguration/aloneAfter`` from the first time
    /// discovery went on (said once a run): `ownAnnouncementSeen` tells whether browsing brought
    /// this node's own announcement back, that is whether mDNS works on this machine at all.
    case alone(ownAnnouncementSeen: Bool)
}
