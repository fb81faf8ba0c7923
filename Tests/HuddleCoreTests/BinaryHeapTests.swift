import Testing

@testable import HuddleCore

@Suite(.offThePool) struct BinaryHeapTests {
    @Test(arguments: [1, 2, 3] as [UInt64])
    func popsInOrderAfterInsertsAndUpdates(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var heap = BinaryHeap<Int>()
        var values: [Int] = []
        for _ in 0..<200 {
            let value = Int.random(in: -1000...1000, using: &random)
            heap.insert(value)
            values.append(value)
        }
        #expect(heap.min == values.min())
        heap.updateEach { $0 = -$0 }
        values = values.map { -$0 }
        var popped: [Int] = []
        while let value = heap.popMin() { popped.append(value) }
        #expect(popped == values.sorted())
        #expect(heap.isEmpty && heap.popMin() == nil)
    }
}
