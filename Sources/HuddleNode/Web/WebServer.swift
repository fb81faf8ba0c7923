import Foundation
import HTTPTypes
import HuddleCore
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle

/// The page's server (`huddle run --web`, `/web`): Hummingbird over HTTP/1.1 with the WebSocket
/// upgrade, bounded like the node's other servers. It serves the page's four files and `/ws`, and
/// checks every request's Host (and a WebSocket's Origin) first (``WebRequestCheck``).
///
/// ```swift
/// let server = WebServer(hub: hub, host: "0.0.0.0", port: 7780, clock: SystemClock(), logger: logger)
/// let group = server.serviceGroup { port in print("serving on \(port)") }
/// try await group.run()                         // until group.triggerGracefulShutdown()
/// ```
struct WebServer: Sendable {
    /// TCP connections accepted at once; past it, new ones wait to be accepted. Above the seats
    /// (``WebSeats/Limits``), so that a newcomer reaches the gate that may seat it in an
    /// unproven connection's place.
    static let acceptedAtOnce = 512
    /// A connection that sends nothing this long is closed: one that never sends a request, an
    /// idle keep-alive, a page whose phone slept (an open page answers the node's pings every 2 s).
    static let readTimeout = TimeAmount.seconds(15)

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

    /// The server as a service group of its own, which serves once run and stops (finishing what
    /// is in flight) when shut down gracefully; `ready` gets the bound port once it listens.
    func serviceGroup(ready: @escaping @Sendable (Int) async -> Void) -> ServiceGroup {
        let admission = WebAdmission()
        let router = Router()
        router.middlewares.add(SecurityHeadersMiddleware())
        router.middlewares.add(HostCheckMiddleware(names: names))
        for file in WebPage.files {
            router.get(RouterPath(file.path)) { _, _ in WebPage.response(file) }
        }
        // Browsers ask for it; an empty answer keeps their consoles quiet.
        router.get("/favicon.ico") { _, _ in Response(status: .noContent, headers: WebPage.securityHeaders) }
        router.get("/ws") { request, _ in
            // Only a request that is no WebSocket upgrade gets here (a refused upgrade is
            // answered 400 by the upgrade channel itself, and says nothing more).
            let refusal = WebRequestCheck.refusal(
                host: request.head.authority, secondHost: request.headers[WebRequestCheck.hostField], origin: request.headers[.origin],
                isWebSocket: true, names: names)
            return WebPage.refuse(status: refusal?.status ?? 400, refusal?.reason ?? "this is the page's WebSocket: open / instead")
        }
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(idleTimeout: Self.readTimeout),
            ws: WebSocketServerConfiguration(maxFrameSize: WebConnection.maximumFrame, closeTimeout: .seconds(2)))
        let upgrade: @Sendable (HTTPRequest, any Channel, Logger) throws -> ShouldUpgradeResult<
            WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>
        > = { [hub, clock, names] request, channel, _ in
                // The seat is given back when the connection closes, however it ends: an upgrade
                // admitted whose handler never ran (a request that announced a body and closed)
                // once kept its slot for good, and 32 of them refused every WebSocket after
                // (issue 45).
                guard request.path == "/ws",
                    WebRequestCheck.refusal(
                        host: request.authority, secondHost: request.headerFields[WebRequestCheck.hostField],
                        origin: request.headerFields[.origin], isWebSocket: true, names: names) == nil,
                    admission.upgrade(channel)
                else { return .dontUpgrade }
                return .upgrade([:]) { inbound, outbound, _ in
                    await WebConnection(hub: hub, clock: clock, channel: channel, admission: admission).serve(inbound, outbound)
                }
            }
        let app = Application(
            router: router,
            // Every connection is gated as it is accepted, before it has said anything: the
            // upgrade channel's own handlers come only once a request has arrived.
            server: HTTPServerBuilder { responder in
                GatedChildChannel(
                    base: HTTP1WebSocketUpgradeChannel(responder: responder, configuration: configuration, shouldUpgrade: upgrade),
                    admission: admission, readTimeout: Self.readTimeout)
            },
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: port), serverName: nil,
                availableConnectionsDelegate: MaximumAvailableConnections(Self.acceptedAtOnce)),
            onServerRunning: { channel in await ready(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        return ServiceGroup(configuration: ServiceGroupConfiguration(services: [app], logger: logger))
    }
}

/// The upgrade channel, with a gate in front of every connection it is handed: its seat
/// (``WebAdmission``) and a read timeout, both from the moment it is accepted.
struct GatedChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let admission: WebAdmission
    let readTimeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try channel.pipeline.syncOperations.addHandlers([
                admission.gate(), IdleStateHandler(readTimeout: readTimeout), CloseWhenReadIdle(),
                SecurityHeadersOnRefusedUpgrades(),
            ])
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return base.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
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

/// Puts the page's security headers (``WebPage/securityHeaders``) on every answer, whatever
/// gave it: a route, a refusal, or an error the router threw (a path it does not know, a method
/// it does not take, CONNECT).
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        } catch {
            response = WebPage.refuse(status: 500, "the page's server failed")
        }
        for field in WebPage.securityHeaders where response.headers[field.name] == nil {
            response.headers.append(field)
        }
        return response
    }
}

/// Puts the security headers on the one answer no route gives: the upgrade channel's own empty
/// 400 to a WebSocket upgrade it was told not to make (a foreign Origin, a wrong Host). It sits
/// below the HTTP encoder, so it sees an answer's head as bytes; any head without a
/// `content-security-policy` gets ``WebPage/securityHeaders`` after its status line. The
/// router's answers have them already (``SecurityHeadersMiddleware``); a WebSocket's frames
/// never begin `HTTP/1.1 `.
final class SecurityHeadersOnRefusedUpgrades: ChannelOutboundHandler, RemovableChannelHandler, Sendable {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    static let lines = WebPage.securityHeaders.map { "\($0.name.rawName): \($0.value)\r\n" }.joined()

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

/// Refuses a request whose Host is not this machine before any route sees it.
struct HostCheckMiddleware<Context: RequestContext>: RouterMiddleware {
    let names: Set<String>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        if let refusal = WebRequestCheck.refusal(
            host: request.head.authority, secondHost: request.headers[WebRequestCheck.hostField], origin: nil, isWebSocket: false, names: names)
        {
            return WebPage.refuse(status: refusal.status, refusal.reason)
        }
        return try await next(request, context)
    }
}
