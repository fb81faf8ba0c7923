/// How much a room's log holds for events it cannot show yet, and for how long.
///
/// Keys are free: anyone on the network can make a fresh one and send events nobody can deliver
/// (seqs past a gap, a causal context that never comes). These limits bound what that costs a
/// node; an event over a limit is refused (``RoomLog/Rejection/overBudget(_:)``) and counted, and
/// anti-entropy fetches it again later if it was real.
///
/// The defaults leave room for what a home network really does: a lost datagram leaves a gap
/// of a few events, filled within a second; a late joiner's pull fills whole origins in seq order.
public struct RoomLogLimits: Hashable, Sendable {
    /// Most distinct origins a room holds events of. A home has a handful of viewers.
    public var maxOrigins = 128
    /// Of those, how many the log keeps for origins with a node behind them (a node whose address
    /// answered this one's probe; the shell says which, see ``RoomLog/insert(_:now:aheadAllowance:reserved:)``).
    /// A flood of fresh keys' joins fills the other slots and stops there: a newcomer who is
    /// really there still gets in. 0: no reservation.
    public var reservedOrigins = 32
    /// Most of the reserved slots that origins of one host may take (``ReservedSeat``): keys are
    /// free, and one machine can answer probes for many of them.
    public var reservedPerHost = 8
    /// Most of the reserved slots that origins proven only by answering at their address may
    /// take, from all hosts together (``ReservedSeat/host(_:)``): the rest are kept for nodes
    /// DNS-SD announced or the viewer named.
    public var reservedForProven = 16
    /// Most origins remembered as refused a slot, so that nobody's event waits for them (see
    /// `RoomLog+Seats`).
    public var maxUnseatedOrigins = 4096
    /// Most events, and bytes of them, held past a gap in one origin's seqs.
    public var maxAheadEvents = 512
    public var maxAheadBytes = 1 << 20
    /// The same for an origin whose first event (its join) is not held: a stranger.
    public var maxStrangerEvents = 32
    public var maxStrangerBytes = 128 << 10
    /// Most strangers whose events are held at once (16 × 128 KiB = 2 MiB): throwaway keys'
    /// events, held and written to the store until they expire, once filled a data dir to
    /// 21.5 MB. A real newcomer's events outrun its join by a moment, and anti-entropy fetches
    /// any refused again.
    public var maxStrangerOrigins = 16
    /// Most conflicts remembered from origins that never joined, waiting for a join to prove
    /// them (see ``RoomLog/Rejection/strangerConflict``).
    public var maxPendingProofs = 64
    /// Most bytes held past gaps in the whole room (all origins together).
    public var maxRoomAheadBytes = 8 << 20
    /// How long an event may wait for what precedes it (a gap in its origin's seqs, or a causal
    /// context not held) before the log gives up on it (``RoomLog/expire(now:)``).
    public var maxWait: TimeSpan = .seconds(60)

    public init() {}
}
