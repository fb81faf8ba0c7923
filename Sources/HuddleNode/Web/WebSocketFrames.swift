import NIOCore
import NIOWebSocket

/// A WebSocket's messages on SwiftNIO's frames (RFC 6455), as ``WebConnection`` reads and writes
/// them. Fragments are joined before they get here (`NIOWebSocketFrameAggregator`, bounded in
/// ``WebServer``); a frame over the decoder's limit closes the connection there.
enum WebSocketMessage: Sendable {
    case text(String)
    case binary(ByteBuffer)
}

/// What the server says on its WebSocket. Frames from a server go unmasked.
struct WebSocketWriter: Sendable {
    let outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>

    func write(_ message: WebSocketMessage) async throws {
        switch message {
        case .text(let text): try await outbound.write(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: text)))
        case .binary(let bytes): try await outbound.write(WebSocketFrame(fin: true, opcode: .binary, data: bytes))
        }
    }

    /// A close frame with `code` and `reason` (cut to fit a control frame's 125 bytes); nothing is
    /// written after it.
    func close(_ code: WebSocketErrorCode, reason: String? = nil) async throws {
        var data = ByteBuffer()
        data.write(webSocketErrorCode: code)
        if let reason { data.writeBytes(reason.utf8.prefix(123)) }
        try await outbound.write(WebSocketFrame(fin: true, opcode: .connectionClose, data: data))
        outbound.finish()
    }
}

/// The messages a page sends, in order: pings are answered here, pongs dropped, and a close frame
/// answered and taken as the end (`nil`). A text message that is not UTF-8 ends the connection.
struct WebSocketMessages: AsyncIteratorProtocol {
    struct NotUTF8: Error {}

    var frames: NIOAsyncChannelInboundStream<WebSocketFrame>.AsyncIterator
    let writer: WebSocketWriter

    mutating func next() async throws -> WebSocketMessage? {
        while let frame = try await frames.next() {
            switch frame.opcode {
            case .text:
                guard let text = String(validating: frame.unmaskedData.readableBytesView, as: UTF8.self) else { throw NotUTF8() }
                return .text(text)
            case .binary:
                return .binary(frame.unmaskedData)
            case .ping:
                try await writer.outbound.write(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData))
            case .connectionClose:
                var data = frame.unmaskedData
                let code = data.readWebSocketErrorCode() ?? .normalClosure
                try? await writer.close(code)
                return nil
            default:
                continue  // pongs, and opcodes a newer page might send
            }
        }
        return nil
    }
}
