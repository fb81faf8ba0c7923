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
    /// TCP connections at once (page loads and WebSockets); past it, new ones wait to be accepted.
    static let maximumTCPConnections = 256
    /// TCP connections from one address at once; past it, a new one is closed at once.
    static let tcpConnectionsPerAddress = 16
    /// An HTTP connection with no request in flight this long is closed.
    static let idleTimeout = TimeAmount.seconds(15)
    /// WebSockets from one address at once.
    static let connectionsPerAddress = 8

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
        let perAddress = ConnectionsPerAddress(limit: Self.tcpConnectionsPerAddress)
        let router = Router()
        router.middlewares.add(HostCheckMiddleware(names: names))
        for file in WebPage.files {
            router.get(RouterPath(file.path)) { _, _ in WebPage.response(file) }
        }
        // Browsers ask for it; an empty answer keeps their consoles quiet.
        router.get("/favicon.ico") { _, _ in Response(status: .noContent, headers: WebPage.securityHeaders) }
        router.get("/ws") { request, _ in
            // Only reached when the upgrade was refused (wrong Origin, too many sockets) or
            // this is not a WebSocket request.
            let refusal = WebRequestCheck.refusal(
                host: request.head.authority, origin: request.headers[.origin], isWebSocket: true, names: names)
            return WebPage.refuse(status: refusal?.status ?? 429, refusal?.reason ?? "too many connections")
        }
        let app = Application(
            router: router,
            server: .http1WebSocketUpgrade(
                configuration: .init(
                    http1: .init(additionalChannelHandlers: [perAddress.handler()], idleTimeout: Self.idleTimeout),
                    ws: WebSocketServerConfiguration(maxFrameSize: WebConnection.maximumFrame, closeTimeout: .seconds(2)))
            ) { [hub, clock, names] request, channel, _ in
                guard request.path == "/ws",
                    WebRequestCheck.refusal(
                        host: request.authority, origin: request.headerFields[.origin], isWebSocket: true, names: names) == nil,
                    hub.admit(from: channel.remoteAddress?.ipAddress ?? "?", perAddress: Self.connectionsPerAddress)
                else { return .dontUpgrade }
                let address = channel.remoteAddress?.ipAddress ?? "?"
                return .upgrade([:]) { inbound, outbound, _ in
                    defer { hub.left(from: address) }
                    await WebConnection(hub: hub, clock: clock, channel: channel).serve(inbound, outbound)
                }
            },
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: port), serverName: nil,
                availableConnectionsDelegate: MaximumAvailableConnections(Self.maximumTCPConnections)),
            onServerRunning: { channel in await ready(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        return ServiceGroup(configuration: ServiceGroupConfiguration(services: [app], logger: logger))
    }
}

/// Refuses a request whose Host is not this machine before any route sees it.
struct HostCheckMiddleware<Context: RequestContext>: RouterMiddleware {
    let names: Set<String>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        if let refusal = WebRequestCheck.refusal(host: request.head.authority, origin: nil, isWebSocket: false, names: names) {
            return WebPage.refuse(status: refusal.status, refusal.reason)
        }
        return try await next(request, context)
    }
}
