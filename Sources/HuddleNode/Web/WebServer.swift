import Foundation
import HuddleCore
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import ServiceLifecycle

/// The page's server (`huddle run --web`, `/web`): SwiftNIO's HTTP/1.1 with the WebSocket
/// upgrade, bounded like the node's other servers. It serves the page's four files and `/ws`, and
/// checks every request's Host (and a WebSocket's Origin) first (``WebRequestCheck``); what it
/// answers over plain HTTP is ``WebPage/answer(to:names:)``, what it says on a WebSocket
/// ``WebConnection``.
///
/// ```swift
/// let server = WebServer(hub: hub, host: "0.0.0.0", port: 7780, clock: SystemClock(), logger: logger)
/// let group = server.serviceGroup { port in print("serving on \(port)") }
/// try await group.run()                         // until group.triggerGracefulShutdown()
/// ```
struct WebServer: Sendable {
    /// TCP connections served at once; past it, new ones wait in the kernel to be accepted. Above
    /// the seats (``WebSeats/Limits``), so that a newcomer reaches the gate that may seat it in an
    /// unproven connection's place.
    static let acceptedAtOnce = 512
    /// A connection that sends nothing this long is closed: one that never sends a request, an
    /// idle keep-alive, a page whose phone slept (an open page answers the node's pings every 2 s).
    static let readTimeout = TimeAmount.seconds(15)
    /// How long an open page has to take its `bye` when the server stops.
    static let byeGrace = TimeAmount.seconds(2)

    let hub: WebHub
    let host: String
    let port: Int
    let clock: any NodeClock
    let logger: Logger
    /// The machine's own names, which a Host header may use besides an address.
    let names: Set<String>

    init(hub: WebHub, host: String, port: Int, clock: any NodeClock, logger: Logger) {
        self.hub = hub
        self.host = host
        self.port = port
        self.clock = clock
        self.logger = logger
        let hostname = ProcessInfo.processInfo.hostName.lowercased()
        names = [hostname, hostname.hasSuffix(".local") ? hostname : hostname + ".local"]
    }

    /// The server as a service group of its own, which serves once run and stops when shut down
    /// gracefully (every connection closed; open pages are told `bye` first, by
    /// ``WebHub/stop()``); `ready` gets the bound port once it listens.
    func serviceGroup(ready: @escaping @Sendable (Int) async -> Void) -> ServiceGroup {
        ServiceGroup(configuration: ServiceGroupConfiguration(services: [Serving(server: self, ready: ready)], logger: logger))
    }

    /// What a connection became once its first request was read.
    enum Connection: Sendable {
        case webSocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case http(NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>)
    }

    struct Serving: Service {
        let server: WebServer
        let ready: @Sendable (Int) async -> Void

        func run() async throws {
            let admission = WebAdmission()
            let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .bind(host: server.host, port: server.port) { channel in
                    channel.eventLoop.makeCompletedFuture { try server.setUp(channel, admission: admission) }
                }
            await ready(listener.channel.localAddress?.port ?? 0)
            // A slot for each connection served at once: the loop takes one before it serves a
            // connection, and while none is free it accepts no more (they wait in the kernel).
            let (slots, freed) = AsyncStream.makeStream(of: Void.self)
            for _ in 0..<WebServer.acceptedAtOnce { freed.yield() }
            try await withGracefulShutdownHandler {
                try await withThrowingDiscardingTaskGroup { group in
                    try await listener.executeThenClose { accepted in
                        var slot = slots.makeAsyncIterator()
                        for try await connection in accepted {
                            guard await slot.next() != nil else { break }  // cancelled
                            group.addTask {
                                await server.serve(connection, admission: admission)
                                freed.yield()
                            }
                        }
                    }
                }
            } onGracefulShutdown: {
                listener.channel.close(promise: nil)
                // Open pages were told `bye` (``WebHub/stop()``) and close once it is written; one
                // that cannot take it in ``WebServer/byeGrace`` is closed as it stands.
                admission.closeAll(keepingSessions: true)
                listener.channel.eventLoop.scheduleTask(in: WebServer.byeGrace) { admission.closeAll() }
            }
        }
    }

    /// A connection's pipeline, from the moment it is accepted: its seat (``WebAdmission``) and
    /// read timeout before anything it says is read, then HTTP/1.1 with the WebSocket upgrade.
    private func setUp(_ channel: any Channel, admission: WebAdmission) throws -> EventLoopFuture<Connection> {
        let operations = channel.pipeline.syncOperations
        try operations.addHandlers([
            admission.gate(), IdleStateHandler(readTimeout: Self.readTimeout), CloseWhenReadIdle(),
            SecurityHeadersOnEveryAnswer(),
        ])
        let upgrader = NIOTypedWebSocketServerUpgrader<Connection>(
            maxFrameSize: WebConnection.maximumFrame,
            shouldUpgrade: { [names] channel, request in
                // The seat is given back when the connection closes, however it ends: an upgrade
                // admitted whose handler never ran (a request that announced a body and closed)
                // once kept its slot for good, and 32 of them refused every WebSocket after
                // (issue 45). A refused upgrade is answered 400 (AnswerRefusedUpgrades).
                let allowed =
                    request.uri == WebPage.webSocketPath
                    && WebRequestCheck.refusal(of: request, isWebSocket: true, names: names) == nil
                    && admission.upgrade(channel)
                return channel.eventLoop.makeSucceededFuture(allowed ? HTTPHeaders() : nil)
            },
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    // A message in fragments is joined here, bounded like one frame.
                    try channel.pipeline.syncOperations.addHandler(
                        NIOWebSocketFrameAggregator(
                            minNonFinalFragmentSize: 1, maxAccumulatedFrameCount: 64,
                            maxAccumulatedFrameSize: WebConnection.maximumFrame))
                    return .webSocket(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
                }
            })
        let upgrades = NIOTypedHTTPServerUpgradeConfiguration<Connection>(
            upgraders: [upgrader],
            notUpgradingCompletionHandler: { channel in
                channel.eventLoop.makeCompletedFuture { .http(try NIOAsyncChannel(wrappingChannelSynchronously: channel)) }
            })
        let connection = try operations.configureUpgradableHTTPServerPipeline(configuration: .init(upgradeConfiguration: upgrades))
        try operations.addHandler(AnswerRefusedUpgrades())
        return connection
    }

    /// One connection, until it closes: a page's WebSocket, or plain requests answered one by one.
    private func serve(_ connection: EventLoopFuture<Connection>, admission: WebAdmission) async {
        do {
            switch try await connection.get() {
            case .webSocket(let webSocket):
                try await webSocket.executeThenClose { inbound, outbound in
                    let writer = WebSocketWriter(outbound: outbound)
                    let messages = WebSocketMessages(frames: inbound.makeAsyncIterator(), writer: writer)
                    await WebConnection(hub: hub, clock: clock, channel: webSocket.channel, admission: admission)
                        .serve(messages, writer)
                }
            case .http(let http):
                try await http.executeThenClose { inbound, outbound in
                    var request: HTTPRequestHead?
                    for try await part in inbound {
                        switch part {
                        case .head(let head): request = head
                        case .body: continue  // a body is read and dropped: nothing here takes one
                        case .end:
                            guard let head = request else { return }
                            request = nil
                            let answer = WebPage.answer(to: head, names: names)
                            let keepAlive = head.isKeepAlive && answer.status < 400
                            try await outbound.write(contentsOf: [
                                .head(answer.head(version: head.version, keepAlive: keepAlive)),
                                .body(.byteBuffer(ByteBuffer(bytes: answer.body))), .end(nil),
                            ])
                            if !keepAlive { return }
                        }
                    }
                }
            }
        } catch {
            // The connection went away mid-request or mid-upgrade, or sent what is not HTTP (its
            // 400 was answered in the pipeline): nothing more to say.
            logger.debug("a connection to the page's server ended: \(error)")
        }
    }
}

/// Answers `400` to a WebSocket upgrade the server refused, and closes the connection: SwiftNIO's
/// upgrader fails a refused upgrade with an error and says nothing (docs/WEB.md: a wrong Host, a
/// foreign Origin, too many connecting, two Hosts: `400`, whatever was wrong).
final class AnswerRefusedUpgrades: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = NIOAny
    typealias OutboundOut = HTTPServerResponsePart

    static let answer = WebPage.Answer.refusal(
        400, "the WebSocket was refused: its Host or Origin is not this page's, or too many pages are connecting")

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is NIOWebSocketUpgradeError else {
            context.fireErrorCaught(error)
            return
        }
        let channel = context.channel
        context.write(wrapOutboundOut(.head(Self.answer.head(version: .http1_1, keepAlive: false))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: Self.answer.body)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}

/// Closes a connection that has sent nothing for the read timeout.
final class CloseWhenReadIdle: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}

/// Puts the security headers on the answers ``WebPage`` does not give: SwiftNIO's own `400` to
/// what is not HTTP at all, and the upgrade's `101`. It sits below the HTTP encoder, so it sees an
/// answer's head as bytes; any head without a `content-security-policy` gets
/// ``WebPage/securityHeaders`` after its status line. A WebSocket's frames never begin `HTTP/1.1 `.
final class SecurityHeadersOnEveryAnswer: ChannelOutboundHandler, RemovableChannelHandler, Sendable {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    static let lines = WebPage.securityHeaders.map { "\($0.0): \($0.1)\r\n" }.joined()

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        var buffer = unwrapOutboundIn(data)
        guard buffer.readableBytes > 9, buffer.getString(at: buffer.readerIndex, length: 9) == "HTTP/1.1 ",
            let head = buffer.getString(at: buffer.readerIndex, length: min(buffer.readableBytes, 8_192)),
            let statusLine = head.range(of: "\r\n"),
            head.range(of: "content-security-policy:", options: .caseInsensitive) == nil
        else {
            context.write(data, promise: promise)
            return
        }
        var out = context.channel.allocator.buffer(capacity: buffer.readableBytes + Self.lines.utf8.count)
        out.writeString(String(head[..<statusLine.upperBound]) + Self.lines)
        buffer.moveReaderIndex(forwardBy: head[..<statusLine.upperBound].utf8.count)
        out.writeBuffer(&buffer)
        context.write(wrapOutboundOut(out), promise: promise)
    }
}
