public import ServiceLifecycle

/// The page's server as one of the run's services, beside the node in its service group
/// (`huddle run`): idle until the node serves the page (`--web`, `/web`), then serving one
/// ``WebServer`` at a time (`/web port` moves it). A graceful shutdown stops it before the node,
/// since the group stops its services in reverse order: every open page hears `bye` while the
/// node still runs, and the server finishes what is in flight.
///
/// ```swift
/// let web = WebService()
/// let group = ServiceGroup(services: [node, web], …)      // web is stopped first
/// web.serve(server, ready: { port in … }, failed: { error in … })   // from the node
/// web.stop()                                               // every page hears bye
/// ```
public final class WebService: Service, Sendable {
    private enum Request: Sendable {
        case serve(WebServer, ready: @Sendable (Int) async -> Void, failed: @Sendable (any Error) async -> Void)
        case stop
    }

    private let requests: AsyncStream<Request>
    private let continuation: AsyncStream<Request>.Continuation

    public init() {
        (requests, continuation) = AsyncStream.makeStream(of: Request.self)
    }

    /// Serves the page with `server`, in place of any served now: `ready` gets the port once it
    /// listens, `failed` why it could not (a port in use).
    func serve(
        _ server: WebServer, ready: @escaping @Sendable (Int) async -> Void, failed: @escaping @Sendable (any Error) async -> Void
    ) {
        continuation.yield(.serve(server, ready: ready, failed: failed))
    }

    /// Stops serving the page: every open page hears `bye`.
    func stop() {
        continuation.yield(.stop)
    }

    public func run() async throws {
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { servers in
                var serving: (server: WebServer, group: ServiceGroup, stopped: AsyncStream<Void>)?
                for await request in requests {
                    if let (server, group, stopped) = serving {
                        await Self.stop(server, group, stopped)
                        serving = nil
                    }
                    guard case .serve(let server, let ready, let failed) = request else { continue }
                    let group = server.serviceGroup(ready: ready)
                    let (stopped, done) = AsyncStream.makeStream(of: Void.self)
                    servers.addTask {
                        do { try await group.run() } catch { await failed(error) }
                        done.finish()
                    }
                    serving = (server, group, stopped)
                }
                if let (server, group, stopped) = serving { await Self.stop(server, group, stopped) }
            }
        } onGracefulShutdown: { [continuation] in
            continuation.finish()
        }
    }

    /// Every page hears `bye`, then the server closes and finishes what is in flight.
    private static func stop(_ server: WebServer, _ group: ServiceGroup, _ stopped: AsyncStream<Void>) async {
        server.hub.stop()
        await group.triggerGracefulShutdown()
        for await _ in stopped {}
    }
}
