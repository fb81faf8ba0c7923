import Testing

@testable import HuddleCore

@Suite(.offThePool) struct FairQueueTests {
    @Test func oneWritersPileDoesNotHoldUpAnothersOnePicture() {
        var waiting = FairQueue<String, Int>(atOnce: 4, perKey: 2)
        for n in 1...5 { waiting.add(n, for: "alice") }
        waiting.add(100, for: "bob")
        // alice's first, bob's one, alice's second; alice has her two running, so nothing more.
        #expect(waiting.startable().map(\.item) == [1, 100, 2])
        #expect(waiting.startable().isEmpty)
        #expect(waiting.waitingCount == 3)
        // One of alice's done: her next starts.
        waiting.finished("alice")
        #expect(waiting.startable().map(\.item) == [3])
    }

    @Test func atMostAtOnceRunInAll() {
        var waiting = FairQueue<String, Int>(atOnce: 4, perKey: 2)
        for key in ["a", "b", "c"] {
            for n in 0..<3 { waiting.add(n, for: key) }
        }
        let first = waiting.startable()
        #expect(first.map(\.key) == ["a", "b", "c", "a"])
        waiting.finished("b")
        #expect(waiting.startable().map(\.key) == ["b"])
        // A finish nobody started changes nothing.
        waiting.finished("zed")
        #expect(waiting.startable().isEmpty)
        for key in ["a", "a", "b", "c"] { waiting.finished(key) }
        #expect(waiting.startable().map(\.key) == ["c", "a", "b", "c"])
        #expect(waiting.waitingCount == 0)
    }
}
