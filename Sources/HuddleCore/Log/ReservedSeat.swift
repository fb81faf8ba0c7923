/// Whether an origin may take one of a room's reserved origin slots
/// (``RoomLogLimits/reservedOrigins``), and whose share of them it uses.
///
/// The reserved slots are for origins with a node behind them. A node proves that by answering
/// at its address (docs/PROTOCOL.md, "Trust"), which one machine can do for many keys on many
/// ports: so each host has a share, ``RoomLogLimits/reservedPerHost``.
public enum ReservedSeat: Hashable, Sendable {
    /// It may not: no node behind it has proven itself.
    case refused
    /// It may, without a share: this node's own events, or the store's.
    case unlimited
    /// A proven peer at `host`: it may while fewer of the reserved slots than the share hold
    /// origins of that host.
    case host(String)
}
