import Testing

@testable import HuddleCore

/// Writes a room's log for calibration tests, numbering each origin's events 1, 2, 3, …
struct CalibrationRoomScript {
    private(set) var events: [Event] = []
    private var seqs: [NodeID: UInt64] = [:]

    @discardableResult
    mutating func add(_ node: NodeID, _ body: EventBody, at time: WallTime) -> Event {
        add(node, body, atMilliseconds: time.millisecondsSinceEpoch)
    }

    /// An event made when its origin's clock read `milliseconds`, as the wire carries it: any
    /// value, a hostile one too.
    @discardableResult
    mutating func add(_ node: NodeID, _ body: EventBody, atMilliseconds milliseconds: Int64) -> Event {
        let seq = (seqs[node] ?? 0) + 1
        seqs[node] = seq
        let event = Event.fixture(node, seq, body, atMilliseconds: milliseconds)
        events.append(event)
        return event
    }

    mutating func mark(_ node: NodeID, _ label: String, at time: WallTime) {
        add(node, .mark(label: label), at: time)
    }

    mutating func nudge(_ node: NodeID, _ milliseconds: Int64, at time: WallTime = .epoch) {
        add(node, .delayNudge(milliseconds: milliseconds), at: time)
    }

    mutating func join(_ node: NodeID, at time: WallTime = .epoch) { add(node, .join(nick: "n\(node)"), at: time) }
    mutating func leave(_ node: NodeID, at time: WallTime = .epoch) { add(node, .leave, at: time) }

    var calibration: Calibration { CalibrationSolver.solve(events) }
}
