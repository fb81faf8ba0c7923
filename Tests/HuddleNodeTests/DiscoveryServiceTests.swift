import Foundation
import HuddleCore
import Logging
import Synchronization
import Testing

@testable import HuddleNode

/// Log records kept in memory, for tests that look at what was logged.
final class DiscoveryLogCapture: Sendable {
    private let records = Mutex<[(level: Logger.Level, message: String)]>([])

    var messages: [(level: Logger.Level, message: String)] { records.withLock { $0 } }

    func logger(level: Logger.Level = .debug) -> Logger {
        var logger = Logger(label: "huddle.discovery.test") { _ in Handler(capture: self) }
        logger.logLevel = level
        return logger
    }

    private struct Handler: LogHandler {
        let capture: DiscoveryLogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            capture.records.withLock { $0.append((event.level, event.message.description)) }
        }
    }
}

/// Points this test process's Avahi client at a system D-Bus that does not exist, so no mDNS
/// daemon can answer it: the suite sees what a machine without avahi-daemon sees, whether or not
/// this one runs a system bus with an avahi-daemon on it (and never talks to that daemon). Avahi's
/// client library reads `DBUS_SYSTEM_BUS_ADDRESS` when it first connects; the variable is set
/// while the test plan is prepared, before any test runs. The live daemon's side is tested on
/// the LAN bed (`Tests/lan/test_lan.py`), with real avahi-daemons in network namespaces.
struct NoMDNSDaemonTrait: SuiteTrait, TestTrait {
    static let busAddress = "unix:path=/nonexistent/huddle-tests/no-system-bus"

    func prepare(for test: Test) async throws {
        setenv("DBUS_SYSTEM_BUS_ADDRESS", Self.busAddress, 1)
    }
}

extension Trait where Self == NoMDNSDaemonTrait {
    /// No mDNS daemon answers this process (see ``NoMDNSDaemonTrait``).
    static var noMDNSDaemon: Self { Self() }
}

/// Reads a discovery stream in a task of its own and keeps every event, with when it came.
final class DiscoveryEventRecorder: Sendable {
    private let state = Mutex<(events: [(event: DiscoveryEvent, at: ContinuousClock.Instant)], finished: Bool)>(
        ([], false))
    private let reader = Mutex<Task<Void, Never>?>(nil)

    init(_ stream: AsyncStream<DiscoveryEvent>) {
        let task = Task { [self] in
            for await event in stream {
                self.state.withLock { $0.events.append((event, .now)) }
            }
            self.state.withLock { $0.finished = true }
        }
        reader.withLock { $0 = task }
    }

    var events: [DiscoveryEvent] { state.withLock { $0.events.map(\.event) } }
    var timedEvents: [(event: DiscoveryEvent, at: ContinuousClock.Instant)] { state.withLock { $0.events } }
    var finished: Bool { state.withLock { $0.finished } }

    /// Stops reading: the stream's consumer goes away.
    func cancel() { reader.withLock { $0?.cancel() } }

    /// Waits until `condition` holds for the events so far; `false` if it does not within `timeout`.
    func wait(
        for timeout: Duration, until condition: ([DiscoveryEvent]) -> Bool
    ) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(events) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition(events)
    }

    /// Waits until the stream has finished.
    func waitUntilFinished(for timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, !finished {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return finished
    }
}

extension DiscoveryEvent {
    var isUnavailable: Bool {
        if case .unavailable = self { return true }
        return false
    }
}

@Suite(.serialized, .noMDNSDaemon) struct DiscoveryServiceTests {
    private var shortRetry: DiscoveryConfiguration {
        var configuration = DiscoveryConfiguration()
        configuration.retryInterval = .milliseconds(200)
        return configuration
    }

    @Test(.timeLimit(.minutes(1)))
    func withoutADaemonDiscoveryIsUnavailableOnce() async {
        let logs = DiscoveryLogCapture()
        let discovery = ServiceDiscovery(logger: logs.logger(), configuration: shortRetry)
        let ad = ServiceAdvertisement(id: discoveryTestID(0xab), nick: "alice", port: 7700, rooms: ["superbowl"])
        let recorder = DiscoveryEventRecorder(discovery.start(advertising: ad))

        // It says so at once: the first thing it reports. (No bound on when it arrives, beyond
        // the wait: the two-thread test pool has been seconds late in CI, 4.4 s once.)
        #expect(await recorder.wait(for: .seconds(20)) { !$0.isEmpty })
        guard let first = recorder.timedEvents.first, case .unavailable(let message) = first.event else {
            Issue.record("expected .unavailable first, got \(recorder.events)")
            discovery.stop()
            return
        }
        #expect(message.contains("discovery is off"))
        #expect(message.contains("sudo systemctl start avahi-daemon"))

        // It keeps retrying (every 200 ms here) without reporting the outage again.
        try? await Task.sleep(for: .seconds(1.5))
        #expect(recorder.events.count == 1)
        let retries = logs.messages.count { $0.message == "discovery still off" }
        #expect(retries >= 3)

        discovery.update(rooms: ["nfl"])  // harmless while off
        discovery.stop()
        #expect(await recorder.waitUntilFinished(for: .seconds(10)))
        #expect(recorder.events.count == 1)
        discovery.stop()  // idempotent
    }

    @Test(.timeLimit(.minutes(1)))
    func browseOnlyWithoutADaemon() async {
        let discovery = ServiceDiscovery(logger: DiscoveryLogCapture().logger())
        let recorder = DiscoveryEventRecorder(discovery.start(advertising: nil))
        #expect(await recorder.wait(for: .seconds(15)) { !$0.isEmpty })
        guard case .unavailable(let message) = recorder.events.first else {
            Issue.record("expected .unavailable, got \(recorder.events)")
            discovery.stop()
            return
        }
        #expect(message.contains("avahi-daemon"))
        discovery.stop()
        #expect(await recorder.waitUntilFinished(for: .seconds(10)))
    }

    @Test func stopBeforeStartGivesAFinishedStream() async {
        let discovery = ServiceDiscovery(logger: DiscoveryLogCapture().logger())
        discovery.stop()
        var events = discovery.start(advertising: nil).makeAsyncIterator()
        #expect(await events.next() == nil)
        discovery.update(rooms: ["a"])  // does nothing
    }

    @Test(.timeLimit(.minutes(1)))
    func secondStartGivesAFinishedStream() async {
        let discovery = ServiceDiscovery(logger: DiscoveryLogCapture().logger(), configuration: shortRetry)
        let recorder = DiscoveryEventRecorder(discovery.start(advertising: nil))
        var second = discovery.start(advertising: nil).makeAsyncIterator()
        #expect(await second.next() == nil)
        #expect(await recorder.wait(for: .seconds(15)) { $0.first?.isUnavailable == true })
        discovery.stop()
    }

    @Test(.timeLimit(.minutes(1)))
    func droppingTheStreamStopsDiscovery() async {
        let logs = DiscoveryLogCapture()
        let discovery = ServiceDiscovery(logger: logs.logger(), configuration: shortRetry)
        let recorder = DiscoveryEventRecorder(discovery.start(advertising: nil))
        #expect(await recorder.wait(for: .seconds(15)) { !$0.isEmpty })
        recorder.cancel()
        #expect(await recorder.waitUntilFinished(for: .seconds(10)))
        let stopped = ContinuousClock.now
        func threadEnded() -> Bool { logs.messages.contains { $0.message == "discovery stopped" } }
        while ContinuousClock.now - stopped < .seconds(10), !threadEnded() {
            try? await Task.sleep(for: .milliseconds(20))
        }
        #expect(threadEnded())
        discovery.stop()  // returns at once: the thread is gone
    }

    @Test(.timeLimit(.minutes(1)))
    func instancesGiveBackWhatTheyTake() async {
        // Each start makes a thread and a pipe, each retry a dns_sd ref; stop gives them all back.
        // The count is the whole test process's, where other tests open and close sockets and
        // files all the while (CI once saw 52 against 47 before): a leak of one descriptor a
        // start leaves 30 more for good, while theirs come and go, so the count must come back
        // to within 10 of where it was.
        func openFiles() -> Int {
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
        }
        let starts = 30
        let before = openFiles()
        for _ in 0..<starts {
            let discovery = ServiceDiscovery(logger: DiscoveryLogCapture().logger(), configuration: shortRetry)
            let recorder = DiscoveryEventRecorder(discovery.start(advertising: nil))
            _ = await recorder.wait(for: .seconds(5)) { !$0.isEmpty }
            discovery.stop()
        }
        #if os(Linux)
        var after = openFiles()
        let waited = ContinuousClock.now
        while after - before >= starts / 3, ContinuousClock.now - waited < .seconds(10) {
            try? await Task.sleep(for: .milliseconds(50))
            after = openFiles()
        }
        #expect(after - before < starts / 3, "\(after - before) more descriptors open after \(starts) starts and stops")
        #endif
    }
}
