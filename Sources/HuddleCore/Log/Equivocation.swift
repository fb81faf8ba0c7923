/// Proof that an origin signed two different events with one id: it equivocated.
///
/// An honest node never does (it stores each event durably before sending it), so the pair,
/// both signatures valid, is evidence anyone can check. A room that holds it quarantines the
/// origin from the proof's seq on (see ``RoomLog/quarantine(_:)``), and gossips the pair so every
/// node reaches the same state.
///
/// ```swift
/// if let proof = Equivocation(heldEvent, arrivingEvent) { log.quarantine(proof) }
/// ```
public struct Equivocation: Hashable, Sendable, CustomStringConvertible {
    /// The two events, in a canonical order (by signature bytes), so every node stores the same
    /// pair whatever order it saw them in.
    public let first: Event
    public let second: Event

    /// The proof two events make, or `nil` if they do not make one: different ids or rooms, or
    /// two copies of one event. Two signatures over the same fields count too: an honest node
    /// signs each event once, and the chain fingerprints (``RoomLog/fingerprint(of:at:)``) tell
    /// the copies apart. Signatures are not checked here: the caller verifies both.
    public init?(_ a: Event, _ b: Event) {
        guard a.id == b.id, a.room == b.room, a != b else { return nil }
        (first, second) = a.signature.lexicographicallyPrecedes(b.signature) ? (a, b) : (b, a)
    }

    public var origin: NodeID { first.origin }
    /// The id both events claim: everything the origin sent from here on is suspect.
    public var seq: UInt64 { first.seq }
    public var room: String { first.room }

    public var description: String { "\(first.id) signed twice" }
}
