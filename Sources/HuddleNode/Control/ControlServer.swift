import Foundation
public import Logging
import NIOCore
import NIOPosix
import Synchronization

/// The node's control socket: a Unix domain socket in the data dir that `huddle status` and
/// `huddle send` talk to while the node runs.
///
/// One JSON ``ControlRequest`` per line in, one JSON ``ControlResponse`` per line out (see
/// `ControlCoding` for the shapes), any number per connection, answered in order. A line that
/// is not a request is answered with ``ControlResponse/error(_:)`` and the connection stays
/// usable; a line over 64 KiB is answered with an error and the connection is closed. The socket
/// file is made mode 0600 right after it is bound (the data dir itself is 0700), and removed by
/// ``close()``.
///
/// Two steps, so that a node can fail early (another node already running in the data dir) and
/// say it is ready only once the socket is there:
///
/// ```swift
/// let control = ControlServer(logger: logger)
/// try await control.start(path: DataDirectory.controlSocketPath(in: dataDir)) { request in
///     await node.handleControl(request)
/// }
/// defer { control.close() }
/// try await withThrowingDiscardingTaskGroup { group in
///     group.addTask { try await control.run() }   // serves until cancelled or closed
///     // ...
/// }
/// ```
///
/// `run()` returns when its task is cancelled or ``close()`` is called; connections still open
/// are closed then. It has the shape of a swift-service-lifecycle `Service`'s `run()`; in a
/// `ServiceGroup`, wrap it as `try await cancelWhenGracefulShutdown { try await control.run() }`.
public final class ControlServer: Sendable {
    /// Answers one request. Called concurrently for different connections.
    public typealias Handler = @Sendable (ControlRequest) async -> ControlResponse

    /// The listener hands over plain channels, not `NIOAsyncChannel`s: NIO traps when an
    /// accepted `NIOAsyncChannel` is dropped unconsumed, which happens to connections accepted
    /// just as the server shuts down (apple/swift-nio#2637). A plain channel is harmless to drop;
    /// it does not read (auto-read is off) until ``serve(_:handler:logger:)`` wraps it, and
    /// ``close()`` closes any that were never handed over.
    private typealias Listener = NIOAsyncChannel<any Channel, Never>
    private typealias Connection = NIOAsyncChannel<ControlLine, ByteBuffer>

    private enum State {
        case idle
        case bound(path: String, listener: Listener, handler: Handler)
        case running(path: String, channel: any Channel)
        case closed
    }

    private struct Guarded {
        var state = State.idle
        /// Every accepted connection still open, so that ``close()`` can close them all.
        var connections: [ObjectIdentifier: any Channel] = [:]
    }

    private let logger: Logger
    private let guarded = Mutex(Guarded())

    /// A server that is not listening yet: call ``start(path:handler:)``.
    public init(logger: Logger = Logger(label: "huddle.control", factory: { _ in SwiftLogNoOpLogHandler() })) {
        self.logger = logger
    }

    /// The socket's path once started, until closed.
    public var path: String? {
        guarded.withLock {
            switch $0.state {
            case .bound(let path, _, _), .running(let path, _): path
            case .idle, .closed: nil
            }
        }
    }

    /// Binds the socket at `path` (replacing a stale socket file left by a node that died) and
    /// makes it mode 0600. Connections are accepted once ``run()`` runs.
    ///
    /// - Throws: ``ControlServerError``: another node is already answering on `path`, something
    ///   other than a socket is there, the path is too long for a Unix socket, or it cannot be
    ///   bound.
    public func start(path: String, handler: @escaping Handler) async throws {
        guard guarded.withLock({ if case .idle = $0.state { true } else { false } }) else {
            throw ControlServerError.alreadyStarted
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard !isDirectory.boolValue, Self.isSocket(path) else { throw ControlServerError.notASocket(path: path) }
            if await ControlClient.isAnswering(socketPath: path) {
                throw ControlServerError.alreadyRunning(dataDirectory: ControlClient.dataDirectory(of: path))
            }
        }
        let listener: Listener
        do {
            listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .childChannelOption(.autoRead, value: false)
                .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let decoder = ControlLineDecoder(maximumLength: ControlCoding.maximumRequestLength)
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(decoder))
                        self.track(channel)
                        return channel
                    }
                }
        } catch let error as SocketAddressError {
            if case .unixDomainSocketPathTooLong = error { throw ControlServerError.pathTooLong(path: path) }
            throw ControlServerError.cannotBind(path: path, reason: "\(error)")
        } catch {
            throw ControlServerError.cannotBind(path: path, reason: "\(error)")
        }
        guard chmod(path, 0o600) == 0 else {
            let reason = String(cString: strerror(errno))
            try? await listener.channel.close()
            unlink(path)
            throw ControlServerError.cannotBind(path: path, reason: "cannot make it private (chmod 0600): \(reason)")
        }
        let stored = guarded.withLock {
            guard case .idle = $0.state else { return false }
            $0.state = .bound(path: path, listener: listener, handler: handler)
            return true
        }
        guard stored else {
            // Closed (or started) while binding.
            try? await listener.channel.close()
            unlink(path)
            throw ControlServerError.alreadyStarted
        }
        logger.debug("control socket listening", metadata: ["huddle.control.path": "\(path)"])
    }

    /// Serves connections until the task is cancelled or ``close()`` is called, then closes
    /// every connection and removes the socket file. Returns (without throwing) in both cases,
    /// and at once if the server was closed before it ran.
    ///
    /// - Throws: ``ControlServerError/notStarted`` if ``start(path:handler:)`` has not succeeded.
    public func run() async throws {
        let taken = try guarded.withLock { guarded throws(ControlServerError) -> (Listener, Handler)? in
            switch guarded.state {
            case .idle: throw .notStarted
            case .running: throw .alreadyStarted
            case .closed: return nil
            case .bound(let path, let listener, let handler):
                guarded.state = .running(path: path, channel: listener.channel)
                return (listener, handler)
            }
        }
        guard let (listener, handler) = taken else { return }
        defer { close() }
        let logger = self.logger
        do {
            try await withThrowingDiscardingTaskGroup { group in
                try await listener.executeThenClose { accepted in
                    for try await channel in accepted {
                        group.addTask { await Self.serve(channel, handler: handler, logger: logger) }
                    }
                }
                // The listener is closed: close the connections still open too.
                group.cancelAll()
            }
        } catch where Task.isCancelled || error is CancellationError {
            logger.debug("control socket stopped", metadata: ["huddle.error": "\(error)"])
        }
    }

    /// Stops listening, closes every connection and removes the socket file. Safe to call more
    /// than once, from anywhere.
    public func close() {
        let (previous, open) = guarded.withLock { guarded in
            let previous = guarded.state
            guarded.state = .closed
            let open = Array(guarded.connections.values)
            guarded.connections = [:]
            return (previous, open)
        }
        switch previous {
        case .bound(let path, let listener, _):
            listener.channel.close(promise: nil)
            unlink(path)
        case .running(let path, let channel):
            channel.close(promise: nil)
            unlink(path)
        case .idle, .closed:
            break
        }
        for channel in open { channel.close(promise: nil) }
    }

    // MARK: Connections

    /// Remembers an accepted connection until it closes; closes it at once if the server is closed.
    private func track(_ channel: any Channel) {
        let key = ObjectIdentifier(channel)
        let closed = guarded.withLock { guarded in
            if case .closed = guarded.state { return true }
            guarded.connections[key] = channel
            return false
        }
        if closed {
            channel.close(promise: nil)
            return
        }
        channel.closeFuture.whenComplete { _ in
            _ = self.guarded.withLock { $0.connections.removeValue(forKey: key) }
        }
    }

    private static func serve(_ channel: any Channel, handler: Handler, logger: Logger) async {
        do {
            let connection = try await channel.eventLoop.submit {
                let connection = try Connection(wrappingChannelSynchronously: channel)
                // Start reading only now that the async handlers are in the pipeline.
                try channel.syncOptions?.setOption(.autoRead, value: true)
                return connection
            }.get()
            try await connection.executeThenClose { lines, outbound in
                for try await line in lines {
                    switch line {
                    case .tooLong:
                        let limit = ControlCoding.maximumRequestLength / 1024
                        try await outbound.write(Self.encode(.error("request longer than \(limit) KiB; closing")))
                        return
                    case .line(let bytes):
                        let response: ControlResponse
                        do {
                            let request = try ControlCoding.decode(ControlRequest.self, from: bytes.readableBytesView)
                            response = await handler(request)
                        } catch {
                            response = .error(
                                #"malformed request: send one JSON request per line, such as {"status":{}} or "#
                                    + #"{"send":{"room":"ROOM","text":"TEXT"}}"#)
                        }
                        try await outbound.write(Self.encode(response))
                    }
                }
            }
        } catch {
            channel.close(promise: nil)
            logger.debug("control connection failed", metadata: ["huddle.error": "\(error)"])
        }
    }

    private static func encode(_ response: ControlResponse) -> ByteBuffer {
        do {
            return ByteBuffer(bytes: try ControlCoding.encode(response))
        } catch {
            let fallback = ControlResponse.error("the node could not encode its answer: \(error)")
            return ByteBuffer(bytes: (try? ControlCoding.encode(fallback)) ?? Array("{}\n".utf8))
        }
    }

    // MARK: Helpers

    private static func isSocket(_ path: String) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return false }
        return info.st_mode & S_IFMT == S_IFSOCK
    }
}

/// Why the control socket could not be started.
public enum ControlServerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A node is already answering on the socket: two nodes must not share a data dir.
    case alreadyRunning(dataDirectory: String)
    /// Something other than a socket is where the socket should be.
    case notASocket(path: String)
    /// The path is longer than a Unix socket address can hold (about 100 bytes).
    case pathTooLong(path: String)
    case cannotBind(path: String, reason: String)
    /// `start` was called twice, or `run` before `start`.
    case alreadyStarted
    case notStarted

    public var description: String {
        switch self {
        case .alreadyRunning(let directory):
            "a Huddle node is already running with data dir \(directory) "
                + "(stop it, or use another --name or --data-dir)"
        case .notASocket(let path):
            "\(path) is in the way of the control socket and is not a socket; move it away"
        case .pathTooLong(let path):
            "the control socket path \(path) is too long for a Unix socket; use a shorter --data-dir"
        case .cannotBind(let path, let reason):
            "cannot open the control socket \(path): \(reason)"
        case .alreadyStarted:
            "the control socket is already started"
        case .notStarted:
            "the control socket is not started"
        }
    }
}
