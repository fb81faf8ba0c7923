/// Origin slots: a room holds the events of at most ``RoomLogLimits/maxOrigins`` origins, and
/// keeps its last ``RoomLogLimits/reservedOrigins`` for origins with a node behind them.
///
/// An origin whose first event found no slot is *unseated*: the log remembers it (the latest
/// ``RoomLogLimits/maxUnseatedOrigins``) and no other event waits for it. Nodes can seat different
/// origins (each sees its own peers, and events arrive in different orders), so a member's
/// message may name in its context an origin this node refused; without this it would wait for
/// that join forever and the reader would never see it. Only joins whose signature checked are
/// remembered: a forged one costs its sender a check and unseats nobody.
extension RoomLog {
    /// Whether the origin's first event was refused a slot (and it is still remembered).
    public func isUnseated(_ origin: NodeID) -> Bool {
        unseated.origins.contains(origin)
    }

    /// The origins whose first event found no slot (the latest remembered).
    public var unseatedOrigins: Set<NodeID> { unseated.origins }

    /// Forgets that `origin` found no slot: it has a node behind it now (a peer this node vouched
    /// for), which may take a reserved slot. Its events are taken again when they come, and
    /// ``capped(_:)`` no longer hides them in a peer's digest, so anti-entropy brings them. If its
    /// join finds no slot again, it is unseated again.
    public mutating func reconsider(_ origin: NodeID) {
        unseated.remove(origin)
    }

    /// Remembers `origin` as unseated and delivers what no longer waits for it.
    mutating func unseat(_ origin: NodeID, now: WallTime) -> [Event] {
        guard unseated.insert(origin, keeping: limits.maxUnseatedOrigins) else { return [] }
        let delivered = deliverReady()
        updateStalls(now: now)
        return delivered
    }
}

/// The unseated origins, oldest forgotten first.
struct UnseatedOrigins: Sendable {
    private(set) var origins: Set<NodeID> = []
    private var order: [NodeID] = []
    private var head = 0

    /// Adds `origin` (false if it was there), forgetting the oldest beyond `limit`.
    mutating func insert(_ origin: NodeID, keeping limit: Int) -> Bool {
        guard limit > 0, origins.insert(origin).inserted else { return false }
        order.append(origin)
        while origins.count > limit {
            origins.remove(order[head])
            head += 1
        }
        if head > limit {
            order.removeFirst(head)
            head = 0
        }
        return true
    }

    /// Forgets `origin` (it took a slot after all).
    mutating func remove(_ origin: NodeID) {
        guard origins.remove(origin) != nil else { return }
        if let index = order[head...].firstIndex(of: origin) { order.remove(at: index) }
    }
}
