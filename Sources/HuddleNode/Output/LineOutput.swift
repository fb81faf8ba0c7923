/// Where a node's output lines go: stdout line by line (``OutputSink``) or, on a terminal, above
/// the interactive console's prompt (``InteractiveConsole``).
public protocol LineOutput: Sendable {
    /// Writes one line (which may hold `\n`s); never waits for the reader and never throws.
    func write(_ text: String)

    /// Writes the line `render` makes (`nil`: none), in its place among the lines written, and
    /// may call it on a thread of its own: a burst of lines is rendered beside the node's work,
    /// not in it.
    func write(rendering render: @escaping @Sendable () -> String?)

    /// Waits until what was written is out, or `timeout` passes: before the process exits.
    func flush(timeout: Duration)
}

extension LineOutput {
    /// Renders at once, on the caller's thread.
    public func write(rendering render: @escaping @Sendable () -> String?) {
        if let text = render() { write(text) }
    }
}
