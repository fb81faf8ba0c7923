/// Where a node's output lines go: stdout line by line (``OutputSink``) or, on a terminal, above
/// the interactive console's prompt (``InteractiveConsole``).
public protocol LineOutput: Sendable {
    /// Writes one line (which may hold `\n`s); never blocks for long and never throws.
    func write(_ text: String)
}
