import Foundation

/// Writes whole lines to a file descriptor (stdout by default), one `write(2)` per line under a
/// lock, so lines from different tasks never interleave and each is out as soon as it is written
/// (nothing is buffered, so there is nothing to flush).
///
/// A closed reader (`huddle run --json | head -1`) does not stop the node: failed writes are
/// counted in ``failedWrites`` and otherwise ignored.
///
/// ```swift
/// let sink = OutputSink.standardOutput
/// sink.write(renderer.ready(id: me.id, nick: "alice", port: 7700, dataDir: dir))
/// ```
public final class OutputSink: LineOutput {
    /// Stdout.
    public static let standardOutput = OutputSink(fileDescriptor: 1)

    private let fileDescriptor: Int32
    private let lock = NSLock()
    /// Guarded by `lock`.
    nonisolated(unsafe) private var failures = 0

    /// A sink writing to `fileDescriptor` (stdout by default), which it does not close.
    public init(fileDescriptor: Int32 = 1) {
        self.fileDescriptor = fileDescriptor
    }

    /// Whether stdout is a terminal.
    public static var standardOutputIsTerminal: Bool { isatty(1) != 0 }

    /// Whether human output on stdout should be coloured: stdout is a terminal, `NO_COLOR` is
    /// not set (https://no-color.org) and `TERM` is not `dumb`.
    public static var standardOutputWantsColors: Bool {
        let environment = ProcessInfo.processInfo.environment
        return standardOutputIsTerminal && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
    }

    /// Writes `text` and a newline.
    public func write(_ text: String) {
        var bytes = Array(text.utf8)
        bytes.append(UInt8(ascii: "\n"))
        lock.lock()
        defer { lock.unlock() }
        if !writeAll(bytes, to: fileDescriptor) { failures += 1 }
    }

    /// How many lines could not be written (the reader went away).
    public var failedWrites: Int {
        lock.lock()
        defer { lock.unlock() }
        return failures
    }
}
