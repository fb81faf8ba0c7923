import Foundation
import HuddleCore
import Testing

@testable import HuddleNode

@Suite struct StoreThroughputTests {
    /// Ingest target: ≥ 10 000 verified events/s. Prints the figure; asserts only correctness,
    /// since timings vary with the machine and the build.
    @Test func insertThroughput() throws {
        let authors = (0..<5).map { _ in NodeIdentity.generate() }
        var log = RoomLog(room: "superbowl")
        var events: [Event] = []
        events.reserveCapacity(20_000)
        for n in 0..<20_000 {
            let author = authors[n % authors.count]
            events.append(log.append(author, .chat(text: "message number \(n), nothing to see"), at: Int64(n)))
        }

        try withTemporaryDirectory { dir in
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
            #expect(inserted == 20_000)
            #expect(try store.eventCount(room: "superbowl") == 20_000)

            var read = 0
            let readElapsed = try clock.measure { read = try store.events(room: "superbowl").count }
            #expect(read == 20_000)
            print("HuddleStore.events(room:): 20000 events read and decoded in \(readElapsed)")
        }
    }

    /// What storing each event this node makes with `synchronous = FULL` costs, beside NORMAL:
    /// one event per transaction, as a node stores what it makes. Prints the figures.
    @Test func durableInsertCost() throws {
        let me = NodeIdentity.generate()
        var log = RoomLog(room: "superbowl")
        let events = (0..<400).map { n in log.append(me, .chat(text: "message \(n)"), at: Int64(n)) }
        try withTemporaryDirectory { dir in
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
            #expect(try store.eventCount(room: "superbowl") == 400)
        }
    }
}
