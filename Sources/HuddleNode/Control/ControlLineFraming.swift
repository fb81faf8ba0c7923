import NIOCore

/// One framed line of the control protocol, as ``ControlLineDecoder`` reads it.
enum ControlLine: Sendable {
    /// A complete line, without its `\n` (and without a `\r` before it).
    case line(ByteBuffer)
    /// A line longer than the limit: the peer gets an error and the connection is closed.
    /// Everything after it on the connection is discarded.
    case tooLong
}

/// Splits a byte stream into `\n`-terminated lines of at most `maximumLength` bytes.
///
/// ```text
/// {"status":{}}\n{"send":{"room":"superbowl","text":"go!"}}\n
/// └──── line ───┘└──────────────── line ─────────────────┘
/// ```
///
/// A line longer than `maximumLength` (its newline not counted) yields ``ControlLine/tooLong``
/// as soon as that many bytes have arrived without a newline, without buffering the rest; the
/// decoder then drops everything else the connection sends. Blank lines are skipped.
struct ControlLineDecoder: ByteToMessageDecoder {
    typealias InboundOut = ControlLine

    let maximumLength: Int
    private var overflowed = false

    init(maximumLength: Int) {
        self.maximumLength = maximumLength
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard !overflowed else {
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            return .needMoreData
        }
        let view = buffer.readableBytesView
        let newline = view.firstIndex(of: UInt8(ascii: "\n"))
        let length = newline.map { $0 - view.startIndex } ?? view.count
        guard length <= maximumLength else {
            overflowed = true
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            context.fireChannelRead(Self.wrapInboundOut(.tooLong))
            return .needMoreData
        }
        guard newline != nil else { return .needMoreData }
        var line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        if line.readableBytesView.last == UInt8(ascii: "\r") {
            line.moveWriterIndex(to: line.writerIndex - 1)
        }
        if line.readableBytesView.contains(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }) {
            context.fireChannelRead(Self.wrapInboundOut(.line(line)))
        }
        return .continue
    }

    mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
    ) throws -> DecodingState {
        // A last line without its newline is still a request (`printf '{"status":{}}' | nc -U`).
        while try decode(context: context, buffer: &buffer) == .continue {}
        if !overflowed, buffer.readableBytes > 0 {
            let line = buffer.readSlice(length: buffer.readableBytes)!
            context.fireChannelRead(Self.wrapInboundOut(.line(line)))
        }
        return .needMoreData
    }
}
