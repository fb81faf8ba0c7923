/// Inputs whose effects wait for a commit carry them out in the order the machine made them.
///
/// The machine decides an order (message 7 is shown before message 8), but two inputs that both
/// wait for the store are resumed by the actor in whatever order its executor picks: a pull's
/// answer and a push come from tasks of different priority. Each waiting input takes a turn
/// before it waits and carries out its effects only when every earlier turn has.
struct CommitTurns {
    private var issued = 0
    private var finished = 0
    private var parked: [Int: CheckedContinuation<Void, Never>] = [:]

    /// The next turn, for an input about to wait for its commit.
    mutating func take() -> Int {
        defer { issued += 1 }
        return issued
    }

    /// Whether every turn before `turn` is done.
    func isDue(_ turn: Int) -> Bool { turn == finished }

    /// Holds `turn` until the turn before it is done.
    mutating func park(_ turn: Int, _ waiter: CheckedContinuation<Void, Never>) {
        parked[turn] = waiter
    }

    /// Marks the due turn done; returns the next turn's waiter, if it is already parked.
    mutating func finish() -> CheckedContinuation<Void, Never>? {
        finished += 1
        return parked.removeValue(forKey: finished)
    }
}
