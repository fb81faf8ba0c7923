/// This node's own events before their commit. An event it makes is stored durably before it is
/// pushed (``originate(_:in:at:now:)``; ``CommitGate`` holds the push until the commit): a power cut
/// must not make it sign another event with a seq a peer holds, which every peer would take for
/// equivocation. Pushes are not the only way out, though: an answer to a digest and a pull's
/// response come from the room's log, which holds the event from the moment it is made. Until the
/// shell says the event is on disk (``committed(_:)``), those leave it out; its own push, sent
/// after the commit, carries it.
extension NodeMachine {
    /// Notes that `event`, made here, waits for its commit.
    mutating func awaitCommit(of event: Event) {
        if rooms[entry: event.room].uncommittedFrom == nil { rooms[entry: event.room].uncommittedFrom = event.seq }
    }

    /// The driver committed `turn`'s writes (``NodeEffect/commit(_:turn:)``): the effects that
    /// waited for it, and for no earlier turn still, come out (``CommitGate``).
    mutating func committed(_ turn: CommitTurn) {
        for due in commitGate.committed(turn) {
            noteCommitted(due.writes)
            emit(.afterCommit(due.turn, due.effects))
        }
    }

    /// `writes` are on disk: this node's own events among them, and every earlier one, may now be
    /// answered for and served.
    mutating func noteCommitted(_ writes: [StoreWrite]) {
        for case .events(let events, own: true) in writes {
            for event in events where event.origin == identity.id {
                guard let from = rooms[entry: event.room].uncommittedFrom, event.seq >= from else { continue }
                let held = rooms[event.room]?.log.vector[identity.id] ?? event.seq
                rooms[entry: event.room].uncommittedFrom = event.seq >= held ? nil : event.seq + 1
            }
        }
    }

    /// `events` without this node's own whose commit is under way in `room`.
    func committedOnly(_ events: [Event], room: String) -> [Event] {
        guard let from = rooms[entry: room].uncommittedFrom else { return events }
        return events.filter { $0.origin != identity.id || $0.seq < from }
    }
}
