import Foundation
import HuddleCore
import Testing

@testable import HuddleNode

/// Tests against a real avahi-daemon, run by hand on a test-bed host (a network namespace with
/// its own D-Bus and avahi-daemon, see DESIGN.md "Testing a LAN on one machine"):
///
/// ```
/// swift build --build-tests
/// ip netns exec hdtest-h1 env DBUS_SYSTEM_BUS_ADDRESS=unix:path=/tmp/hdtest/h1/bus \
///     AVAHI_COMPAT_NOWARN=1 HUDDLE_DISCOVERY_TEST_PEER=1 swift test --skip-build --filter DiscoveryLiveTests
/// ```
///
/// `findsAnotherInstance` passes when the same test runs on a second host at the same time.
/// `watch` is a probe for timing runs: it browses for `HUDDLE_DISCOVERY_TEST_WATCH` seconds and
/// prints every event with the wall-clock time (advertising a node named
/// `HUDDLE_DISCOVERY_TEST_ADVERTISE` if set). Without `HUDDLE_DISCOVERY_TEST_PEER=1` all of
/// these are skipped.
@Suite(.serialized, .enabled(if: liveDiscovery, "set HUDDLE_DISCOVERY_TEST_PEER=1 on a host with avahi-daemon"))
struct DiscoveryLiveTests {
    @Test(.timeLimit(.minutes(1)))
    func advertisesWhatAvahiBrowseSees() async throws {
        let ad = ServiceAdvertisement(id: randomID(), nick: "live", port: 7711, rooms: ["superbowl", "nfl"])
        let discovery = ServiceDiscovery(logger: DiscoveryLogCapture().logger())
        let recorder = DiscoveryEventRecorder(discovery.start(advertising: ad))
        defer { discovery.stop() }
        #expect(await recorder.wait(for: .seconds(5)) { $0.contains(.available) })

        let marker = String(ad.id.description)  // the id prefix in the instance name
        let first = await browseUntil(timeout: .seconds(15)) { lines in
            lines.contains { $0.hasPrefix("=") && $0.contains(marker) && $0.contains("\"rooms=superbowl,nfl\"") }
        }
        let line = try #require(first.first { $0.hasPrefix("=") && $0.contains(marker) })
        #expect(line.contains("\"id=\(ad.id.hex)\""))
        #expect(line.contains("\"txtvers=1\""))
        #expect(line.contains("\"nick=live\""))
        #expect(line.contains("\"proto=2\""))
        #expect(line.contains(";7711;"))

        discovery.update(rooms: ["superbowl", "nfl", "mlb"])
        let updated = await browseUntil(timeout: .seconds(15)) { lines in
            lines.contains { $0.hasPrefix("=") && $0.contains(marker) && $0.contains("\"rooms=superbowl,nfl,mlb\"") }
        }
        #expect(updated.contains { $0.contains("\"rooms=superbowl,nfl,mlb\"") })

        discovery.stop()
        #expect(await recorder.waitUntilFinished(for: .seconds(2)))
        let gone = await browseUntil(timeout: .seconds(15), resolve: false) { lines in
            !lines.contains { $0.contains(marker) }
        }
        #expect(!gone.contains { $0.contains(marker) })
        // Its own service never comes back as a peer.
        #expect(!recorder.events.contains { if case .found(let peer) = $0 { peer.id == ad.id } else { false } })
    }

    @Test(.timeLimit(.minutes(1)))
    func findsAnotherInstance() async throws {
        let host = ProcessInfo.processInfo.hostName
        let ad = ServiceAdvertisement(id: randomID(), nick: "peer-\(host)", port: 7722, rooms: ["superbowl"])
        let discovery = ServiceDiscovery(logger: DiscoveryLogCapture().logger())
        let recorder = DiscoveryEventRecorder(discovery.start(advertising: ad))
        defer { discovery.stop() }
        let found = await recorder.wait(for: .seconds(40)) { events in
            events.contains { if case .found(let peer) = $0 { peer.nick.hasPrefix("peer-") } else { false } }
        }
        #expect(found)
        for case .found(let peer) in recorder.events where peer.nick.hasPrefix("peer-") {
            print("found \(peer.nick) \(peer.id) at \(peer.host):\(peer.port) rooms \(peer.rooms)")
            #expect(peer.id != ad.id)
            #expect(peer.port == 7722)
            #expect(peer.rooms.first == "superbowl")
            if let expected = ProcessInfo.processInfo.environment["HUDDLE_DISCOVERY_TEST_EXPECT_HOST"] {
                #expect(peer.host == expected)
            }
        }
        // Join a room: the other side's resolve, kept open, reports the new TXT record; and the
        // same the other way round.
        discovery.update(rooms: ["superbowl", "room-\(host)"])
        let updated = await recorder.wait(for: .seconds(20)) { events in
            events.contains {
                if case .found(let peer) = $0 { peer.nick.hasPrefix("peer-") && peer.rooms.count == 2 } else { false }
            }
        }
        #expect(updated)
        for case .found(let peer) in recorder.events where peer.nick.hasPrefix("peer-") && peer.rooms.count == 2 {
            print("updated \(peer.nick) rooms \(peer.rooms)")
        }
        // Stay a while so the other side sees this one's update too.
        try await Task.sleep(for: .seconds(3))
    }

    @Test(.timeLimit(.minutes(5)))
    func watch() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let seconds = environment["HUDDLE_DISCOVERY_TEST_WATCH"].flatMap(Double.init) else { return }
        var configuration = DiscoveryConfiguration()
        configuration.retryInterval = .seconds(1)
        let discovery = ServiceDiscovery(logger: DiscoveryLogCapture().logger(), configuration: configuration)
        let advertisement = environment["HUDDLE_DISCOVERY_TEST_ADVERTISE"].map {
            ServiceAdvertisement(id: randomID(), nick: $0, port: 7733, rooms: ["superbowl"])
        }
        let recorder = DiscoveryEventRecorder(discovery.start(advertising: advertisement))
        var printed = 0
        let end = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < end {
            let events = recorder.events
            for event in events.dropFirst(printed) {
                let wall = String(format: "%.3f", Date().timeIntervalSince1970)
                print("WATCH \(wall) \(event)")
            }
            printed = events.count
            try await Task.sleep(for: .milliseconds(5))
        }
        discovery.stop()
        if let nick = environment["HUDDLE_DISCOVERY_TEST_EXPECT_NICK"] {
            let events = recorder.events
            let foundAt = events.indices.filter {
                if case .found(let peer) = events[$0] { peer.nick == nick } else { false }
            }
            #expect(!foundAt.isEmpty)
            if environment["HUDDLE_DISCOVERY_TEST_EXPECT_RESTART"] == "1" {
                // found → (lost) → unavailable → available → found again
                let off = events.firstIndex { $0.isUnavailable }
                let on = off.flatMap { off in events[off...].firstIndex(of: .available) }
                #expect(off != nil && on != nil)
                if let first = foundAt.first, let off, let on {
                    #expect(first < off)
                    #expect(foundAt.contains { $0 > on })
                }
            }
        }
    }
}

let liveDiscovery = ProcessInfo.processInfo.environment["HUDDLE_DISCOVERY_TEST_PEER"] == "1"

private func randomID() -> NodeID {
    var generator = SystemRandomNumberGenerator()
    return NodeID(bytes: (0..<NodeID.byteCount).map { _ in UInt8.random(in: 0...255, using: &generator) })!
}

/// Runs `avahi-browse -t -p [-r] _huddle._tcp` until `done` holds for its lines (or time is up)
/// and returns the last lines.
private func browseUntil(
    timeout: Duration, resolve: Bool = true, _ done: ([String]) -> Bool
) async -> [String] {
    let deadline = ContinuousClock.now + timeout
    var lines = [String]()
    repeat {
        lines = avahiBrowse(resolve: resolve)
        if done(lines) { return lines }
        try? await Task.sleep(for: .milliseconds(300))
    } while ContinuousClock.now < deadline
    return lines
}

private func avahiBrowse(resolve: Bool) -> [String] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/avahi-browse")
    process.arguments = (resolve ? ["-r"] : []) + ["-t", "-p", ServiceAdvertisement.serviceType]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    do {
        try process.run()
    } catch {
        return []
    }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
}
