import Foundation
import HuddleCore
import NIOCore
import NIOPosix

/// Asks a running node something over its control socket: `huddle status` and `huddle send`.
///
/// ```swift
/// let socket = DataDirectory.controlSocketPath(in: dataDir)
/// switch try await ControlClient.request(.status, socketPath: socket, timeout: .seconds(5)) {
/// case .status(let status): print(status.node.nick)
/// case .error(let message): print(message)
/// case .sent: break
/// }
/// // no node there: ControlClientError.noNode, whose description says how to start one
/// ```
public enum ControlClient {
    /// What ``ControlClientError/noNode(dataDirectory:startCommand:)`` suggests by default.
    public static let defaultStartCommand = "huddle run --name NICK"

    /// Sends one request and waits for its answer.
    ///
    /// - Parameters:
    ///   - timeout: how long to wait for the whole exchange.
    ///   - startCommand: the command the "no node" error suggests, e.g. `huddle run --name alice`.
    /// - Throws: ``ControlClientError``.
    public static func request(
        _ request: ControlRequest, socketPath: String, timeout: Duration,
        startCommand: String = defaultStartCommand
    ) async throws -> ControlResponse {
        let directory = dataDirectory(of: socketPath)
        guard FileManager.default.fileExists(atPath: socketPath) else {
            throw ControlClientError.noNode(dataDirectory: directory, startCommand: startCommand)
        }
        let line: [UInt8]
        do {
            line = try ControlCoding.encode(request)
        } catch {
            throw ControlClientError.cannotConnect(
                socketPath: socketPath, reason: "cannot encode the request: \(error)")
        }
        return try await withThrowingTaskGroup(of: ControlResponse.self) { group in
            group.addTask {
                try await exchange(line, socketPath: socketPath, startCommand: startCommand)
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw ControlClientError.timedOut(dataDirectory: directory, after: timeout)
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    /// Whether a node accepts connections on `socketPath` (a stale socket file refuses them).
    public static func isAnswering(socketPath: String) async -> Bool {
        do {
            let connection = try await connect(socketPath)
            try await connection.executeThenClose { _, _ in }
            return true
        } catch {
            return false
        }
    }

    /// The data dir a socket path is in.
    static func dataDirectory(of socketPath: String) -> String {
        URL(fileURLWithPath: socketPath).deletingLastPathComponent().path
    }

    // MARK: Exchange

    private typealias Connection = NIOAsyncChannel<ControlLine, ByteBuffer>

    private static func exchange(
        _ line: [UInt8], socketPath: String, startCommand: String
    ) async throws -> ControlResponse {
        let directory = dataDirectory(of: socketPath)
        let connection: Connection
        do {
            connection = try await connect(socketPath)
        } catch {
            throw translate(error, socketPath: socketPath, startCommand: startCommand)
        }
        return try await connection.executeThenClose { lines, outbound in
            try await outbound.write(ByteBuffer(bytes: line))
            for try await answer in lines {
                guard case .line(let bytes) = answer else {
                    throw ControlClientError.badAnswer(dataDirectory: directory, reason: "the answer is too long")
                }
                do {
                    return try ControlCoding.decode(ControlResponse.self, from: bytes.readableBytesView)
                } catch {
                    throw ControlClientError.badAnswer(dataDirectory: directory, reason: "\(error)")
                }
            }
            try Task.checkCancellation()
            throw ControlClientError.noAnswer(dataDirectory: directory)
        }
    }

    private static func connect(_ socketPath: String) async throws -> Connection {
        try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(unixDomainSocketPath: socketPath) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(ControlLineDecoder(maximumLength: ControlCoding.maximumResponseLength)))
                    return try Connection(wrappingChannelSynchronously: channel)
                }
            }
    }

    private static func translate(_ error: any Error, socketPath: String, startCommand: String) -> any Error {
        if let error = error as? IOError {
            switch error.errnoCode {
            case ECONNREFUSED, ENOENT, ENOTSOCK:
                return ControlClientError.noNode(
                    dataDirectory: dataDirectory(of: socketPath), startCommand: startCommand)
            default:
                return ControlClientError.cannotConnect(
                    socketPath: socketPath, reason: String(cString: strerror(error.errnoCode)))
            }
        }
        if let error = error as? SocketAddressError, case .unixDomainSocketPathTooLong = error {
            return ControlClientError.cannotConnect(
                socketPath: socketPath, reason: "the path is too long for a Unix socket; use a shorter --data-dir")
        }
        return ControlClientError.cannotConnect(socketPath: socketPath, reason: "\(error)")
    }
}

/// Why a control request got no answer, in words that say what to do.
public enum ControlClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No node listens there: no socket file, or a stale one left by a node that died.
    case noNode(dataDirectory: String, startCommand: String)
    /// The node did not answer in time.
    case timedOut(dataDirectory: String, after: Duration)
    /// The node closed the connection without answering.
    case noAnswer(dataDirectory: String)
    /// The node answered something this client does not understand.
    case badAnswer(dataDirectory: String, reason: String)
    /// Connecting failed for another reason (permissions, path length...).
    case cannotConnect(socketPath: String, reason: String)

    public var description: String {
        switch self {
        case .noNode(let directory, let command):
            "no Huddle node is running with data dir \(directory) (start one with `\(command)`)"
        case .timedOut(let directory, let timeout):
            "the Huddle node with data dir \(directory) did not answer within "
                + HumanFormat.duration(.milliseconds(timeout.milliseconds))
        case .noAnswer(let directory):
            "the Huddle node with data dir \(directory) closed the connection without answering"
        case .badAnswer(let directory, let reason):
            "the Huddle node with data dir \(directory) gave an answer this huddle does not understand "
                + "(is it another version?): \(reason)"
        case .cannotConnect(let path, let reason):
            "cannot reach the Huddle node's control socket \(path): \(reason)"
        }
    }
}

extension Duration {
    /// Whole milliseconds, rounded down.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
