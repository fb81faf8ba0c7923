import Foundation
import Testing

@testable import HuddleCore
@testable import HuddleNode

/// A status with a bit of everything, shared by the control tests.
let sampleStatus = NodeStatus(
    node: .init(
        id: String(repeating: "ab", count: 32), nick: "alice", port: 7700, addresses: ["192.0.2.11"],
        uptimeMs: 3_725_000, dataDir: "/home/alice/.local/share/huddle/alice"),
    peers: [
        .init(
            id: String(repeating: "cd", count: 32), nick: "bob", address: "192.0.2.12:7700", state: "alive",
            rttMs: 0.42, lastSeenMs: 1200, rooms: ["superbowl"], foundBy: "mdns"),
        .init(
            id: String(repeating: "ef", count: 32), nick: "carol", address: "192.0.2.13:7700", state: "suspect",
            rttMs: nil, lastSeenMs: nil, rooms: [], foundBy: "seed"),
    ],
    rooms: [
        .init(
            name: "superbowl", current: true,
            members: [
                .init(
                    id: String(repeating: "ab", count: 32), nick: "alice", offsetMs: 0, calibrated: true,
                    reference: String(repeating: "ab", count: 32)),
                .init(
                    id: String(repeating: "cd", count: 32), nick: "bob", offsetMs: 2000, calibrated: true,
                    reference: String(repeating: "ab", count: 32), behindYouMs: 2000),
                .init(
                    id: String(repeating: "ef", count: 32), nick: "carol", offsetMs: nil, calibrated: false,
                    reference: nil),
            ],
            eventCount: 42, heldBackCount: 1,
            versionVector: [String(repeating: "ab", count: 32): 12, String(repeating: "cd", count: 32): 30],
            // bob's 30th is held back: not counted for the reader.
            shownBy: [String(repeating: "ab", count: 32): 12, String(repeating: "cd", count: 32): 29])
    ],
    counters: .init(
        packetsIn: 10, packetsOut: 12, rejected: 0, newerProtocol: 0, eventsReceived: 30, eventsStored: 42))

/// A private directory with a short path (Unix socket paths are limited to about 100 bytes).
struct TemporaryDirectory: ~Copyable {
    let path: String

    init() throws {
        var template = Array("/tmp/hct-XXXXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
        path = String(cString: made)
    }

    var socketPath: String { DataDirectory.controlSocketPath(in: path) }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// The answers the test node gives.
@Sendable private func answer(_ request: ControlRequest) async -> ControlResponse {
    switch request {
    case .status: return .status(sampleStatus)
    case .send(let room, let text):
        if room == "superbowl" { return .sent(id: "\(String(repeating: "ab", count: 32))#\(text.count)") }
        if room == "slow" {
            // Never answers: the sleep ends only when the server stops and cancels it.
            try? await Task.sleep(for: .seconds(3600))
            return .error("too late")
        }
        return .error("you are not in room \"\(room)\"")
    case .sendDirect(let to, _):
        return .error("nobody called \(to) is here")
    case .command(_, let line, _):
        return .said(["* ran \(line)"])
    }
}

/// A started server and the task running it; `stop()` closes it and waits for `run()` to end.
private struct RunningServer: Sendable {
    let server: ControlServer
    let task: Task<Void, any Error>

    static func start(at path: String) async throws -> RunningServer {
        let server = ControlServer()
        try await server.start(path: path, handler: answer)
        return RunningServer(server: server, task: Task { try await server.run() })
    }

    func stop() async throws {
        server.close()
        try await task.value
    }
}

@Suite struct ControlSocketTests {
    init() { BrokenPipes.ignored }

    /// How long a request may take before the test calls it hung: far longer than an answer
    /// takes (under a millisecond), because the test pool can be seconds late to run the server's
    /// next step while other tests compute (see `OffThePool` in HuddleCoreTests).
    static let answerWithin = Duration.seconds(60)

    @Test func statusAndSendRoundTrip() async throws {
        let directory = try TemporaryDirectory()
        let running = try await RunningServer.start(at: directory.socketPath)

        let status = try await ControlClient.request(.status, socketPath: directory.socketPath, timeout: Self.answerWithin)
        #expect(status == .status(sampleStatus))

        let sent = try await ControlClient.request(
            .send(room: "superbowl", text: "go!"), socketPath: directory.socketPath, timeout: Self.answerWithin)
        #expect(sent == .sent(id: String(repeating: "ab", count: 32) + "#3"))

        let refused = try await ControlClient.request(
            .send(room: "nba", text: "hi"), socketPath: directory.socketPath, timeout: Self.answerWithin)
        #expect(refused == .error("you are not in room \"nba\""))

        // A console command travels as one and its words come back (`huddle send "/now kickoff"`).
        let said = try await ControlClient.request(
            .command(room: "superbowl", line: "/now kickoff", json: false), socketPath: directory.socketPath,
            timeout: Self.answerWithin)
        #expect(said == .said(["* ran /now kickoff"]))

        try await running.stop()
        #expect(!FileManager.default.fileExists(atPath: directory.socketPath))
    }

    @Test func socketIsPrivate() async throws {
        let directory = try TemporaryDirectory()
        let running = try await RunningServer.start(at: directory.socketPath)
        var info = stat()
        #expect(stat(directory.socketPath, &info) == 0)
        #expect(info.st_mode & S_IFMT == S_IFSOCK)
        #expect(info.st_mode & 0o777 == 0o600)
        try await running.stop()
    }

    @Test func malformedLineGetsAnErrorAndTheConnectionStaysUsable() async throws {
        let directory = try TemporaryDirectory()
        let running = try await RunningServer.start(at: directory.socketPath)
        let connection = try RawConnection(path: directory.socketPath)

        try await connection.send("this is not json\n")
        let first = try #require(try await connection.response())
        guard case .error(let message) = first else { Issue.record("expected an error, got \(first)"); return }
        #expect(message.contains("malformed request"))

        // Blank lines are skipped; CRLF is fine; two requests in one write get two answers in order.
        try await connection.send("\n   \r\n{\"status\":{}}\r\n{\"send\":{\"room\":\"superbowl\",\"text\":\"ab\"}}\n")
        #expect(try await connection.response() == .status(sampleStatus))
        #expect(try await connection.response() == .sent(id: String(repeating: "ab", count: 32) + "#2"))

        // Valid JSON that is not a request.
        try await connection.send("{\"dance\":{}}\n")
        #expect(try await connection.response().map { if case .error = $0 { true } else { false } } == true)
        try await connection.send("{\"status\":{}}")
        try await connection.send("\n")
        #expect(try await connection.response() == .status(sampleStatus))
        try await running.stop()
    }

    @Test func aLineOf64KiBIsReadButALongerOneClosesTheConnection() async throws {
        let directory = try TemporaryDirectory()
        let running = try await RunningServer.start(at: directory.socketPath)
        let connection = try RawConnection(path: directory.socketPath)

        try await connection.send(String(repeating: " ", count: 64 * 1024 - 13) + "{\"status\":{}}\n")
        #expect(try await connection.response() == .status(sampleStatus))

        try await connection.send(String(repeating: "a", count: 64 * 1024 + 1))
        let answer = try #require(try await connection.response())
        #expect(answer == .error("request longer than 64 KiB; closing"))
        #expect(try await connection.line() == nil)  // closed
        try await running.stop()
    }

    @Test func noSocketFileMeansNoNode() async throws {
        let directory = try TemporaryDirectory()
        let error = await #expect(throws: ControlClientError.self) {
            try await ControlClient.request(
                .status, socketPath: directory.socketPath, timeout: Self.answerWithin,
                startCommand: "huddle run --name alice")
        }
        #expect(error == .noNode(dataDirectory: directory.path, startCommand: "huddle run --name alice"))
        #expect(
            error?.description
                == "no Huddle node is running with data dir \(directory.path) "
                + "(start one with `huddle run --name alice`)")
    }

    @Test func staleSocketFileMeansNoNodeAndIsReplaced() async throws {
        let directory = try TemporaryDirectory()
        try makeStaleSocket(at: directory.socketPath)
        #expect(FileManager.default.fileExists(atPath: directory.socketPath))

        let error = await #expect(throws: ControlClientError.self) {
            try await ControlClient.request(.status, socketPath: directory.socketPath, timeout: Self.answerWithin)
        }
        #expect(error == .noNode(dataDirectory: directory.path, startCommand: ControlClient.defaultStartCommand))
        #expect(error?.description.contains("no Huddle node is running with data dir \(directory.path)") == true)

        let running = try await RunningServer.start(at: directory.socketPath)
        #expect(try await ControlClient.request(.status, socketPath: directory.socketPath, timeout: Self.answerWithin)
            == .status(sampleStatus))
        try await running.stop()
    }

    @Test func aSecondNodeOnTheSameSocketIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let running = try await RunningServer.start(at: directory.socketPath)
        let second = ControlServer()
        await #expect(throws: ControlServerError.alreadyRunning(dataDirectory: directory.path)) {
            try await second.start(path: directory.socketPath, handler: answer)
        }
        // The first one is untouched.
        #expect(try await ControlClient.request(.status, socketPath: directory.socketPath, timeout: Self.answerWithin)
            == .status(sampleStatus))
        try await running.stop()
    }

    @Test func somethingElseInTheWayIsRefused() async throws {
        let directory = try TemporaryDirectory()
        #expect(FileManager.default.createFile(atPath: directory.socketPath, contents: Data("x".utf8)))
        await #expect(throws: ControlServerError.notASocket(path: directory.socketPath)) {
            try await ControlServer().start(path: directory.socketPath, handler: answer)
        }
        #expect(FileManager.default.fileExists(atPath: directory.socketPath))
    }

    @Test(.timeLimit(.minutes(1))) func slowNodeTimesOut() async throws {
        let directory = try TemporaryDirectory()
        let running = try await RunningServer.start(at: directory.socketPath)
        // The handler never answers, so only the client's own timeout can end the request. (No
        // bound on how long it took: on two busy cores the test pool can be late by tens of
        // seconds, as CI saw. The time limit catches a client that would wait for ever.)
        let error = await #expect(throws: ControlClientError.self) {
            try await ControlClient.request(
                .send(room: "slow", text: "x"), socketPath: directory.socketPath, timeout: .milliseconds(200))
        }
        #expect(error == .timedOut(dataDirectory: directory.path, after: .milliseconds(200)))
        try await running.stop()  // ends the handler still sleeping
    }

    @Test func cancellingRunStopsServingAndRemovesTheSocket() async throws {
        let directory = try TemporaryDirectory()
        let running = try await RunningServer.start(at: directory.socketPath)
        // An open connection does not hold it up.
        let idle = try RawConnection(path: directory.socketPath)
        try await idle.send("{\"status\":{}}\n")
        #expect(try await idle.response() == .status(sampleStatus))
        running.task.cancel()
        try await running.task.value
        #expect(!FileManager.default.fileExists(atPath: directory.socketPath))
        #expect(try await idle.line() == nil)
        await #expect(throws: ControlClientError.self) {
            try await ControlClient.request(.status, socketPath: directory.socketPath, timeout: Self.answerWithin)
        }
    }

    /// Clients connecting while the server shuts down get an answer or an error, never a crash.
    @Test func shuttingDownWhileClientsConnect() async throws {
        for round in 0..<20 {
            let directory = try TemporaryDirectory()
            let running = try await RunningServer.start(at: directory.socketPath)
            let path = directory.socketPath
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        _ = try? await ControlClient.request(.status, socketPath: path, timeout: .seconds(2))
                    }
                }
                group.addTask {
                    if round % 2 == 0 { running.task.cancel() } else { running.server.close() }
                }
            }
            try await running.task.value
            #expect(!FileManager.default.fileExists(atPath: directory.socketPath))
        }
        // Closed before it ever ran, with connections waiting.
        for _ in 0..<10 {
            let directory = try TemporaryDirectory()
            let server = ControlServer()
            try await server.start(path: directory.socketPath, handler: answer)
            let waiting = try RawConnection(path: directory.socketPath)
            server.close()
            _ = try? await waiting.line()
        }
    }

    @Test func closeBeforeRunAndTwiceIsHarmless() async throws {
        let directory = try TemporaryDirectory()
        let server = ControlServer()
        try await server.start(path: directory.socketPath, handler: answer)
        #expect(server.path == directory.socketPath)
        server.close()
        server.close()
        #expect(server.path == nil)
        #expect(!FileManager.default.fileExists(atPath: directory.socketPath))
        try await server.run()  // returns at once
        await #expect(throws: ControlServerError.notStarted) { try await ControlServer().run() }
    }

    @Test func tooLongAPathIsExplained() async throws {
        let path = "/tmp/" + String(repeating: "x", count: 120) + "/control.sock"
        await #expect(throws: ControlServerError.pathTooLong(path: path)) {
            try await ControlServer().start(path: path, handler: answer)
        }
    }
}

// MARK: - Raw sockets

private func unixAddress(_ path: String) -> sockaddr_un {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
        for (index, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
    }
    return address
}

#if canImport(Glibc)
private let streamType = Int32(SOCK_STREAM.rawValue)
#else
private let streamType = SOCK_STREAM
#endif

/// Leaves a socket file nobody listens on, as a node killed with SIGKILL does.
private func makeStaleSocket(at path: String) throws {
    let fd = socket(AF_UNIX, streamType, 0)
    guard fd >= 0 else { throw POSIXError(.EIO) }
    defer { close(fd) }
    var address = unixAddress(path)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard bound == 0, listen(fd, 1) == 0 else { throw POSIXError(.EIO) }
}

/// A blocking Unix socket client, to send the server exactly the bytes a test wants. Its reads
/// run on a thread of their own so that they never hold up Swift's cooperative pool.
private final class RawConnection: @unchecked Sendable {
    private let fd: Int32
    private var buffer: [UInt8] = []

    init(path: String) throws {
        fd = socket(AF_UNIX, streamType, 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = unixAddress(path)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)  // a hang, not a slow answer: the test pool can be seconds late
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    func send(_ text: String) async throws {
        let bytes = Array(text.utf8)
        try await onThread {
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { write(self.fd, $0.baseAddress!, $0.count) }
                guard written > 0 else { throw POSIXError(.EPIPE) }
                offset += written
            }
        }
    }

    /// The next line, or `nil` once the server has closed the connection.
    func line() async throws -> String? {
        try await onThread {
            while true {
                if let newline = self.buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: self.buffer[..<newline], as: UTF8.self)
                    self.buffer.removeSubrange(...newline)
                    return line
                }
                var chunk = [UInt8](repeating: 0, count: 65_536)
                let count = chunk.withUnsafeMutableBytes { read(self.fd, $0.baseAddress!, $0.count) }
                let failure = errno
                if count < 0, failure == EINTR { continue }
                if count == 0 || (count < 0 && failure == ECONNRESET) { return nil }
                // EAGAIN is SO_RCVTIMEO running out; anything else is said as it is (a failure
                // once said "timed out" for every error, which hid what happened).
                guard count > 0 else {
                    throw POSIXError(failure == EAGAIN ? .ETIMEDOUT : POSIXErrorCode(rawValue: failure) ?? .EIO)
                }
                self.buffer += chunk[..<count]
            }
        }
    }

    func response() async throws -> ControlResponse? {
        guard let line = try await line() else { return nil }
        return try JSONDecoder().decode(ControlResponse.self, from: Data(line.utf8))
    }

    private func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result(catching: body)) }.start()
        }
    }
}
