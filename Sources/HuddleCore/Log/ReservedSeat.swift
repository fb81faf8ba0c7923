/// Whether an origin may take one of a room's reserved origin slots
/// (``RoomLogLimits/reservedOrigins``), and whose share of them it uses.
///
/// The reserved slots are for origins with a node behind them. A node proves that by answering
/// at its address (docs/PROTOCOL.md, "Trust"), which one machine can do for many keys on many
/// ports: so each host has a share, ``RoomLogLimits/reservedPerHost``. And one attacker has
/// several hosts: 32 keys proven from 4 took every reserved slot (issue 45), so origins proven
/// only that way share ``RoomLogLimits/reservedForProven`` of them, and the rest are kept for
/// nodes the network announced over DNS-SD or the viewer named (`--peer`). Not for nodes such a
/// node names in gossip: it names every peer it knows, strangers too.
public enum ReservedSeat: Hashable, Sendable {
    /// It may not: no node behind it has proven itself.
    case refused
    /// It may, without a share: this node's own events, or the store's.
    case unlimited
    /// A proven peer at `host` that DNS-SD announced here, or that the viewer named: it may while
    /// fewer of the reserved slots than the host's share hold origins of that host.
    case announced(String)
    /// A peer at `host` proven only by answering there: as ``announced(_:)``, and while origins
    /// proven only so hold fewer than ``RoomLogLimits/reservedForProven`` of the slots.
    case host(String)

    /// The host whose share it uses, if any.
    var host: String? {
        switch self {
        case .announced(let host), .host(let host): host
        case .refused, .unlimited: nil
        }
    }
}
