import HuddleCore
import NIOCore

/// One framed line of the control protocol, as ``ControlLineDecoder`` reads it.
enum ControlLine: Sendable {
    /// A complete line, without its `\n` (and without a `\r` before it).
    case line(ByteBuffer)
    /// A line longer than the limit: the peer gets an error and the connection is closed.
    /// Everything after it on the connection is discarded.
    case tooLong
}

/// The control socket's framing in a channel pipeline: ``ControlLineSplitter`` (in HuddleCore,
/// where it is fuzzed) over the bytes each read brings.
struct ControlLineDecoder: ByteToMessageDecoder {
    typealias InboundOut = ControlLine

    private var splitter: ControlLineSplitter

    init(maximumLength: Int) {
        splitter = ControlLineSplitter(maximumLength: maximumLength)
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        fire(splitter.append(buffer.readableBytesView), context: context)
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        return .needMoreData
    }

    mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
    ) throws -> DecodingState {
        _ = try decode(context: context, buffer: &buffer)
        fire(splitter.finish(), context: context)
        return .needMoreData
    }

    private func fire(_ pieces: [ControlLineSplitter.Piece], context: ChannelHandlerContext) {
        for piece in pieces {
            switch piece {
            case .line(let bytes): context.fireChannelRead(Self.wrapInboundOut(.line(ByteBuffer(bytes: bytes))))
            case .tooLong: context.fireChannelRead(Self.wrapInboundOut(.tooLong))
            }
        }
    }
}
