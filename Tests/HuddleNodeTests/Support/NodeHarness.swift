import Foundation
import HuddleCore
import Logging
import NIOCore
import NIOPosix
import Synchronization

@testable import HuddleNode

/// A clock a test moves by hand: both clocks advanced together.
final class ManualClock: NodeClock {
    private let now: Mutex<NodeTime>

    init(wall: WallTime = .milliseconds(sinceEpoch: 1_700_000_000_000)) {
        now = Mutex(NodeTime(wall: wall, monotonic: .start + .seconds(1)))
    }

    func wall() -> WallTime { now.withLock { $0.wall } }
    func monotonic() -> MonotonicTime { now.withLock { $0.monotonic } }

    func advance(_ span: TimeSpan) {
        now.withLock { $0 = $0.advanced(by: span) }
    }
}

/// Output lines kept in memory, for reading back as JSON objects.
final class MemorySink: LineOutput {
    private let lines = Mutex<[String]>([])

    func write(_ text: String) { lines.withLock { $0.append(text) } }
    func flush(timeout: Duration) {}

    /// Every line written, parsed as a JSON object.
    var objects: [[String: Any]] {
        lines.withLock { $0 }.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    /// The texts of the chat messages shown so far, in order.
    var messages: [String] {
        objects.filter { $0["type"] as? String == "message" }.compactMap { $0["text"] as? String }
    }
}

/// A plain UDP socket on 127.0.0.1 playing a peer: it sends datagrams to the node and reads
/// what the node sends it, without blocking a thread of the test pool.
final class UDPPeer: Sendable {
    let descriptor: Int32
    let port: UInt16

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard bound == 0, named == 0 else {
            close(descriptor)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        self.descriptor = descriptor
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(descriptor) }

    var address: PeerAddress { PeerAddress(host: "127.0.0.1", port: port) }

    func send(_ message: WireMessage, toPort target: Int) {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(target).bigEndian
        let bytes = message.encoded()
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(descriptor, bytes, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }

    /// The next datagram the node sent here that `matches`, or nil after `timeout`; others are
    /// skipped.
    func receive(
        timeout: Duration = .seconds(30), where matches: (WireMessage) -> Bool = { _ in true }
    ) async -> WireMessage? {
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while ContinuousClock.now < deadline {
            let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 {
                if let message = try? WireMessage(decoding: buffer[..<count]), matches(message) { return message }
                continue
            }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return nil
    }
}

/// One real node (its store on disk, its UDP socket on 127.0.0.1, its receive loop) with a
/// manual clock and an in-memory sink; no timer loop, no console, no mDNS: the test moves the
/// clock and calls ``Node/runDueWork()`` itself.
struct NodeHarness {
    let node: Node
    let clock: ManualClock
    let sink: MemorySink
    let store: HuddleStore
    let port: Int
    let identity: NodeIdentity
    let dataDir: String
    private let receiving: Task<Void, Never>

    static func start(nick: String, room: String, dataDir: String? = nil, clock: ManualClock = ManualClock()) async throws -> NodeHarness {
        _ = BrokenPipes.ignored
        let restarting = dataDir != nil
        let dataDir = dataDir ?? FileManager.default.temporaryDirectory.appendingPathComponent("huddle-node-\(UUID())").path
        var configuration = NodeConfiguration(
            nick: nick, room: room, dataDir: dataDir, mdns: false, json: true, console: false,
            listenHost: "127.0.0.1")
        // Nobody marks in these tests of the actor: the shield off, as for a viewer who knows it
        // is ahead (the shield is the core's, tested there and end to end).
        configuration.shield = nil
        // A restart in a data dir just stopped waits out a lock that a process another test
        // spawns at that moment still holds for a while (``reopenedStore(_:)``).
        let store = try restarting ? reopenedStore(dataDir) : HuddleStore(directory: dataDir)
        let identity = try store.loadOrCreateIdentity()
        let (udp, tcp, endpoint) = try await Node.bind(host: "127.0.0.1", port: 0, on: MultiThreadedEventLoopGroup.singleton)
        try? await tcp.channel.close()
        let sink = MemorySink()
        let port = udp.channel.localAddress?.port ?? 0
        let node = try Node(
            configuration: configuration, store: store, identity: identity, logger: Logger(label: "test"),
            port: port, datagrams: endpoint,
            web: WebService(),  // never run: these nodes serve no page (the e2e tests serve it)
            clock: clock, sink: sink)
        let receiving = Task {
            _ = try? await udp.executeThenClose { inbound, _ in
                for try await envelope in inbound { await node.receive(envelope) }
            }
        }
        await node.feed(.start(room: room, key: nil, seeds: []))
        return NodeHarness(
            node: node, clock: clock, sink: sink, store: store, port: port, identity: identity, dataDir: dataDir,
            receiving: receiving)
    }

    /// Closes the socket and the store (the data dir stays, for a restart).
    func stop() async throws {
        receiving.cancel()
        try await node.datagrams.endpoint.channel.close()
        node.writer.flush()
        try store.close()
    }

    /// Moves the clock on and runs what fell due.
    func advance(_ span: TimeSpan) async {
        clock.advance(span)
        _ = await node.runDueWork()
    }

    /// Waits (polling, off the test pool's threads) until `condition` holds or 30 s pass: long,
    /// because the whole suite shares two cores and a busy pool; a passing test waits milliseconds.
    func eventually(_ condition: @Sendable () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return false
    }
}
