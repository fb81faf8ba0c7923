import HuddleCore

/// What a node's console hands the node: from piped stdin (``StandardInputLines``) or from the
/// interactive console on a terminal (``InteractiveConsole``).
///
/// Every time is the wall clock when the key that finished the input
/// reached this process, taken before anything is parsed: a mark made from it is as close to the
/// viewer's keypress as the node can see.
enum ConsoleInput: Equatable, Sendable {
    /// A line typed or piped in, without its newline.
    case line(String, at: WallTime)
    /// Lines piped in together (what one read of stdin brought), without their newlines: their
    /// chat goes to the machine in one turn, its events in one commit (``Node/linesArrived(_:at:)``).
    case lines([String], at: WallTime)
    /// A line over ``StandardInputLines/maximumLineBytes`` was dropped; its length so far.
    case tooLong(bytes: Int)
    /// One key asked to mark the moment the prompt offered then (`nil`: it offered none).
    case markOffered(label: String?, at: WallTime)
    /// Ctrl-C or Ctrl-D on the interactive console.
    case quit
    /// Ctrl-S: the viewer's stream paused, at the keypress.
    case pause(at: WallTime)
    /// Ctrl-Q: it plays again, at the keypress.
    case resume(at: WallTime)
    /// What was typed at a hidden prompt (``InteractiveConsole/askSecret(_:)``): never echoed,
    /// never kept in history.
    case secret(String)
    /// The hidden prompt was left with Ctrl-C, Escape or an empty Enter.
    case secretCancelled
}
