import Foundation

/// Writes whole lines to a file descriptor (stdout by default), in order, without ever making
/// the caller wait: lines are queued and written by a thread of their own (``AsyncFileWriter``),
/// so a reader that stops reading for a while does not stall the node.
///
/// A closed reader (`huddle run --json | head -1`) does not stop the node: failed writes are
/// counted in ``failedWrites`` and otherwise ignored. A reader that falls more than 16 MiB behind
/// loses lines (counted in ``droppedLines``), and then reads the `droppedNotice` line first.
///
/// ```swift
/// let sink = OutputSink()
/// sink.write(renderer.ready(id: me.id, nick: "alice", port: 7700, dataDir: dir))
/// sink.flush(timeout: .seconds(5))   // before exiting
/// ```
public final class OutputSink: LineOutput {
    private let writer: AsyncFileWriter

    /// A sink writing to `fileDescriptor` (stdout by default), which it does not close.
    /// `droppedNotice` is the line written after lines were dropped, given how many.
    public init(fileDescriptor: Int32 = 1, droppedNotice: (@Sendable (Int) -> String)? = nil) {
        var noticeBytes: (@Sendable (Int) -> [UInt8])?
        if let droppedNotice {
            noticeBytes = { count in Array((droppedNotice(count) + "\n").utf8) }
        }
        writer = AsyncFileWriter(fileDescriptor: fileDescriptor, droppedNotice: noticeBytes)
    }

    /// Whether stdout is a terminal.
    public static var standardOutputIsTerminal: Bool { isatty(1) != 0 }

    /// Whether human output on stdout should be coloured: stdout is a terminal, `NO_COLOR` is
    /// not set (https://no-color.org) and `TERM` is not `dumb`.
    public static var standardOutputWantsColors: Bool {
        let environment = ProcessInfo.processInfo.environment
        return standardOutputIsTerminal && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
    }

    /// Queues `text` and a newline.
    public func write(_ text: String) {
        writer.enqueue(Self.line(text))
    }

    /// Queues `render`, called on the writer's thread just before what follows it is written.
    public func write(rendering render: @escaping @Sendable () -> String?) {
        writer.enqueue { render().map(Self.line) ?? [] }
    }

    /// `text` and a newline, as bytes.
    private static func line(_ text: String) -> [UInt8] {
        var bytes = Array(text.utf8)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// Waits until every line is written or `timeout` passes.
    public func flush(timeout: Duration) {
        writer.flush(timeout: timeout)
    }

    /// Whether every line queued so far has been written (or has failed).
    public var isIdle: Bool { writer.isIdle }

    /// How many lines could not be written (the reader went away).
    public var failedWrites: Int { writer.failedWrites }

    /// How many lines were dropped because the reader fell too far behind.
    public var droppedLines: Int { writer.droppedWrites }
}
