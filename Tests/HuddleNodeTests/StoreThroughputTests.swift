import Foundation
import HuddleCore
import Testing

@testable import HuddleNode

/// Runs `body` on a thread of its own, so that seconds of synchronous work (signing, SQLite)
/// do not hold one of the few threads Swift Testing's cooperative pool has: tests that wait
/// on timers and sockets would otherwise wait for it (two cores, two threads).
/// Its result comes back to the test, which checks it: an `#expect` on that thread would not
/// be tied to the test.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (done: CheckedContinuation<T, any Error>) in
        Thread.detachNewThread {
            do {
                done.resume(returning: try body())
            } catch {
                done.resume(throwing: error)
            }
        }
    }
}

@Suite struct StoreThroughputTests {
    /// Ingest target: ≥ 10 000 verified events/s. Prints the figure; asserts only correctness,
    /// since timings vary with the machine and the build.
    @Test func insertThroughput() async throws {
        let (inserted, counted, read) = try await offThePool { try Self.insertThroughputBody() }
        #expect(inserted == 20_000)
        #expect(counted == 20_000)
        #expect(read == 20_000)
    }

    /// Events inserted, counted in the store, and read back.
    static func insertThroughputBody() throws -> (Int, Int, Int) {
        let authors = (0..<5).map { _ in NodeIdentity.generate() }
        var log = RoomLog(room: "superbowl")
        var events: [Event] = []
        events.reserveCapacity(20_000)
        for n in 0..<20_000 {
            let author = authors[n % authors.count]
            events.append(log.append(author, .chat(text: "message number \(n), nothing to see"), at: .epoch + .milliseconds(n)))
        }

        return try withTemporaryDirectory { dir in
            let store = try HuddleStore(directory: dir)
            let clock = ContinuousClock()
            var inserted = 0
            let elapsed = try clock.measure {
                var start = 0
                while start < events.count {
                    let batch = events[start..<min(start + 500, events.count)]
                    inserted += try store.insert(batch)
                    start += batch.count
                }
            }
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let rate = Int(Double(inserted) / seconds)
            print("HuddleStore.insert: \(inserted) events in \(elapsed), \(rate) events/s (batches of 500)")
            let counted = try store.eventCount(room: "superbowl")

            var read = 0
            let readElapsed = try clock.measure { read = try store.events(room: "superbowl").count }
            print("HuddleStore.events(room:): 20000 events read and decoded in \(readElapsed)")
            return (inserted, counted, read)
        }
    }

    /// What storing each event this node makes with `synchronous = FULL` costs, beside NORMAL:
    /// one event per transaction, as a node stores what it makes. Prints the figures.
    @Test func durableInsertCost() async throws {
        #expect(try await offThePool { try Self.durableInsertCostBody() } == 400)
    }

    /// Events stored.
    static func durableInsertCostBody() throws -> Int {
        let me = NodeIdentity.generate()
        var log = RoomLog(room: "superbowl")
        let events = (0..<400).map { n in log.append(me, .chat(text: "message \(n)"), at: .epoch + .milliseconds(n)) }
        return try withTemporaryDirectory { dir in
            let store = try HuddleStore(directory: dir)
            let clock = ContinuousClock()
            var perEvent: [Bool: Double] = [:]
            for (durable, slice) in [(false, events[0..<200]), (true, events[200..<400])] {
                let elapsed = try clock.measure {
                    for event in slice { try store.insert([event], durable: durable) }
                }
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                perEvent[durable] = seconds / Double(slice.count) * 1e6
            }
            print(
                "HuddleStore.insert of one event: \(Int(perEvent[false]!)) µs (synchronous=NORMAL), "
                    + "\(Int(perEvent[true]!)) µs (durable, synchronous=FULL), in \(dir)")
            return try store.eventCount(room: "superbowl")
        }
    }
}
