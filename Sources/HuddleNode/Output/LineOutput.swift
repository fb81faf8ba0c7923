/// Where a node's output lines go: stdout line by line (``OutputSink``) or, on a terminal, above
/// the interactive console's prompt (``InteractiveConsole``).
public protocol LineOutput: Sendable {
    /// Writes one line (which may hold `\n`s); never waits for the reader and never throws.
    func write(_ text: String)

    /// Waits until what was written is out, or `timeout` passes: before the process exits.
    func flush(timeout: Duration)
}
