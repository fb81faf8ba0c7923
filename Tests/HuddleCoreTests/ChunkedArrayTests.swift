import Testing

@testable import HuddleCore

@Suite struct ChunkedArrayTests {
    @Test func holdsWhatWasAppendedInOrderAcrossChunks() {
        var list: ChunkedArray<Int> = []
        for n in 0..<1_300 { list.append(n) }
        #expect(list.count == 1_300 && Array(list) == Array(0..<1_300))
        #expect(list[511] == 511 && list[512] == 512 && list.last == 1_299)
    }

    @Test(arguments: [0, 1, 511, 512, 513, 1_024, 1_299, 1_300, 2_000])
    func cutsBackToAnyLengthAndGrowsAgain(kept: Int) {
        var list: ChunkedArray<Int> = []
        for n in 0..<1_300 { list.append(n) }
        list.removeSubrange(kept...)
        #expect(Array(list) == Array(0..<min(kept, 1_300)))
        list.append(-1)
        #expect(list.count == min(kept, 1_300) + 1 && list.last == -1)
    }
}
