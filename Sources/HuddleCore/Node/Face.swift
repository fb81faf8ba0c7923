/// Where the viewer's input came from: the node's own console, a paired phone's page, or the
/// control socket (`huddle send`). The machine answers a command where it was asked, decides
/// what each face may run (``NodeMachine/refusal(of:from:)``), and takes a confirmation only
/// from the face that was asked (a wild mark's second press).
///
/// ```swift
/// machine.handle(.consoleLine("/history 5", at: now.wall, from: .page), now: now)
/// // the listing comes out as .output(.history(...), to: .page): the console does not repeat it
/// ```
public enum Face: String, Sendable, Hashable {
    case console
    case page
    case control
}

extension NodeOutput {
    /// Whether this line answers what a face asked (a notice, a listing, a problem, help), which
    /// goes back to that face only; the room's own lines (messages, marks, offsets, peers) go to
    /// every face.
    public var isAnswer: Bool {
        switch self {
        case .notice, .help, .problem, .history, .shield, .confirmMark: true
        case .room, .peer, .nickConflict, .listening, .listeningStopped: false
        }
    }
}
