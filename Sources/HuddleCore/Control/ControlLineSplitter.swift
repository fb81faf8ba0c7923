/// Cuts the control socket's byte stream into `\n`-terminated lines of at most `maximumLength`
/// bytes, whatever chunks it arrives in (the shell's `ControlLineDecoder` feeds it).
///
/// ```text
/// {"status":{}}\n{"send":{"room":"superbowl","text":"go!"}}\n
/// └──── line ───┘└──────────────── line ─────────────────┘
/// ```
///
/// A `\r` before the newline is dropped, and lines of only spaces and tabs are skipped. A line
/// longer than `maximumLength` (its newline not counted) gives ``Piece/tooLong`` as soon as that
/// many bytes have arrived without a newline, without buffering the rest, and everything after
/// it is discarded: the connection is to be closed. At end of stream (``finish()``) a last line
/// without its newline is still a line (`printf '{"status":{}}' | nc -U`). The splitter holds at
/// most one incomplete line, and looks at each byte once.
///
/// ```swift
/// var splitter = ControlLineSplitter(maximumLength: 64 * 1024)
/// for piece in splitter.append(chunk) { ... }   // .line(bytes) or .tooLong
/// ```
public struct ControlLineSplitter: Sendable {
    /// What the stream held.
    public enum Piece: Hashable, Sendable {
        /// A complete line, without its `\n` (or `\r\n`).
        case line([UInt8])
        /// A line over the limit: nothing more comes from this stream.
        case tooLong
    }

    public let maximumLength: Int
    /// The incomplete line so far.
    private var pending: [UInt8] = []
    private var overflowed = false

    public init(maximumLength: Int) {
        self.maximumLength = max(0, maximumLength)
    }

    /// The lines `chunk` completes.
    public mutating func append(_ chunk: some Collection<UInt8>) -> [Piece] {
        var pieces: [Piece] = []
        guard !overflowed else { return pieces }
        for byte in chunk {
            if byte == UInt8(ascii: "\n") {
                if let line = takeLine() { pieces.append(.line(line)) }
                continue
            }
            guard pending.count < maximumLength else {
                overflowed = true
                pending = []
                pieces.append(.tooLong)
                return pieces
            }
            pending.append(byte)
        }
        return pieces
    }

    /// End of stream: the last line, if one is pending without its newline.
    public mutating func finish() -> [Piece] {
        guard !overflowed, let line = takeLine() else { return [] }
        return [.line(line)]
    }

    /// The pending line, emptied; `nil` if it is blank.
    private mutating func takeLine() -> [UInt8]? {
        var line = pending
        pending = []
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        return line.contains(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }) ? line : nil
    }
}
