import HuddleCore
import NIOCore

/// The TCP side of the wire as NIO handlers: frames (see ``WireFrame``) in and out, so a sync
/// connection reads and writes ``WireMessage``s, as the control socket reads and writes lines.
///
/// ```swift
/// try channel.pipeline.syncOperations.addHandlers(
///     ByteToMessageHandler(WireFrameDecoder()), MessageToByteHandler(WireFrameEncoder()))
/// let connection = try NIOAsyncChannel<WireMessage, WireMessage>(wrappingChannelSynchronously: channel)
/// ```
enum WireFrameCoder {
    /// Adds the decoder and encoder to a channel's pipeline; call on its event loop. Frames in
    /// over `maxInboundFrameBytes` close the connection before they are buffered.
    static func addHandlers(to channel: any Channel, maxInboundFrameBytes: Int = WireLimits.maxFrameBytes) throws {
        try channel.pipeline.syncOperations.addHandlers(
            ByteToMessageHandler(WireFrameDecoder(maxFrameBytes: maxInboundFrameBytes)),
            MessageToByteHandler(WireFrameEncoder()))
    }
}

/// Cuts the byte stream into frames with the core's ``FrameSplitter`` (its limit, its errors)
/// and decodes each into a ``WireMessage``. A frame announcing more than
/// ``WireLimits/maxFrameBytes``, or one that does not decode, is an error: the connection is
/// closed, as it cannot be resynchronised.
struct WireFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = WireMessage

    private var splitter: FrameSplitter

    init(maxFrameBytes: Int = WireLimits.maxFrameBytes) {
        splitter = FrameSplitter(maxFrameBytes: maxFrameBytes)
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let payloads = try splitter.append(buffer.readableBytesView)
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        for payload in payloads {
            context.fireChannelRead(Self.wrapInboundOut(try WireMessage(decoding: payload)))
        }
        return .needMoreData
    }

    mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
    ) throws -> DecodingState {
        try decode(context: context, buffer: &buffer)
    }
}

/// Writes each ``WireMessage`` as one frame.
struct WireFrameEncoder: MessageToByteEncoder {
    typealias OutboundIn = WireMessage

    func encode(data: WireMessage, out: inout ByteBuffer) {
        out.writeBytes(WireFrame.encode(data))
    }
}
