/// One input's writes that must be on disk before the rest of what it caused is carried out, and
/// their place in line (see ``CommitGate``).
public struct CommitTurn: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let number: UInt64

    public static func < (a: CommitTurn, b: CommitTurn) -> Bool { a.number < b.number }
    public var description: String { "turn \(number)" }
}

/// What must be on disk before what, decided once for every driver.
///
/// An input whose writes hold this node's own event (durable) or the record that a message was
/// shown must not be seen outside before they are committed: a power cut must not make the node
/// sign another event with a seq a peer holds, and a `kill -9` must not make it show a message
/// twice. Such an input's effects come out as one ``NodeEffect/commit(_:turn:)``; the rest waits
/// here until the driver reports the turn committed (``NodeInput/committed(_:)``: in the store,
/// or in a journal a `kill -9` cannot lose either, which the node's shell keeps) *and* every
/// earlier turn is out, then comes out as ``NodeEffect/afterCommit(_:_:)``. So messages are shown
/// in the machine's order however the commits return. An input with no such write passes at once
/// (its writes as ``NodeEffect/persist(_:)``, committed in the order handed over, not waited for):
/// a slow disk holds up neither the socket nor the chat.
struct CommitGate {
    /// A turn whose effects wait.
    struct Waiting {
        var turn: CommitTurn
        var writes: [StoreWrite]
        var effects: [NodeEffect]
        var committed = false
    }

    private var issued: UInt64 = 0
    /// Turns not yet out, oldest first.
    private var waiting: [Waiting] = []

    /// Turns whose effects still wait.
    var waitingTurns: Int { waiting.count }

    /// One input's effects as the driver may carry them out now. Two kinds come first and never
    /// wait. Whom a goodbye goes to (``NodeEffect/vouchedPeers(_:incarnation:)``): a line saying
    /// a peer is alive can wake the process that reads it, which may stop this node at once; the
    /// goodbye must already go to that peer. And a pull's own steps (start, check, ask for more,
    /// end): they show nothing and carry none of this node's events, and a pull that waited for
    /// each batch's commit would take a backlog at the disk's pace.
    mutating func pass(_ effects: [NodeEffect]) -> [NodeEffect] {
        var first: [NodeEffect] = []
        var writes: [StoreWrite] = []
        var rest: [NodeEffect] = []
        var mustLand = false
        for effect in effects {
            switch effect {
            case .vouchedPeers, .pull, .checkSignatures, .pullNext, .pullDone:
                first.append(effect)
            case .persist(let write):
                writes.append(write)
                mustLand = mustLand || write.mustLandFirst
                rest.append(effect)
            default:
                rest.append(effect)
            }
        }
        guard mustLand else { return first + rest }
        let turn = CommitTurn(number: issued)
        issued += 1
        waiting.append(Waiting(turn: turn, writes: writes, effects: rest.filter { !$0.isPersist }))
        return first + [.commit(writes, turn: turn)]
    }

    /// `turn`'s writes are on disk: the turns now due, oldest first (none while an earlier turn
    /// waits for its own commit).
    mutating func committed(_ turn: CommitTurn) -> [Waiting] {
        guard let index = waiting.firstIndex(where: { $0.turn == turn }) else { return [] }
        waiting[index].committed = true
        var due: [Waiting] = []
        while let oldest = waiting.first, oldest.committed { due.append(waiting.removeFirst()) }
        return due
    }
}

extension StoreWrite {
    /// Whether what follows it in the same input (a datagram sent, a line shown) must wait for its
    /// commit: this node's own event, the lease of its seqs, and the record that a message was
    /// shown.
    public var mustLandFirst: Bool {
        switch self {
        case .events(_, let own): own
        case .lease: true
        case .shown: true
        default: false
        }
    }
}

extension NodeEffect {
    var isPersist: Bool {
        if case .persist = self { true } else { false }
    }
}
