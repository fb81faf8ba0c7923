import Testing

@testable import HuddleCore

@Suite(.offThePool) struct VersionVectorTests {
    let a = NodeID.fixture(1)
    let b = NodeID.fixture(2)
    let c = NodeID.fixture(3)

    @Test func absentOriginsCountAsZeroAndZeroEntriesVanish() {
        var vector: VersionVector = [a: 3]
        #expect(vector[b] == 0)
        vector[a] = 0
        #expect(vector == VersionVector())
        #expect(vector.isEmpty)
        #expect(VersionVector([a: 0, b: 2]) == [b: 2])
    }

    @Test func compareCoversAllFourOrders() {
        let base: VersionVector = [a: 2, b: 1]
        #expect(base.compare(to: [a: 2, b: 1]) == .equal)
        #expect(base.compare(to: [a: 3, b: 1]) == .before)
        #expect(base.compare(to: [a: 2]) == .after)
        #expect(base.compare(to: [a: 1, b: 1, c: 1]) == .concurrent)
        #expect(VersionVector().compare(to: VersionVector()) == .equal)
    }

    @Test func rangesMissingFromTheOtherSide() {
        let mine: VersionVector = [a: 5, b: 1, c: 2]
        let theirs: VersionVector = [a: 2, b: 4]
        #expect(mine.ranges(missingFrom: theirs) == [
            SeqRange(origin: a, seqs: 3...5),
            SeqRange(origin: c, seqs: 1...2),
        ])
        #expect(theirs.ranges(missingFrom: mine) == [SeqRange(origin: b, seqs: 2...4)])
        #expect(mine.ranges(missingFrom: mine).isEmpty)
    }

    // MARK: Algebra, on seeded random vectors

    static let seeds: [UInt64] = Array(1...200)

    private static func randomVector(_ rng: inout SplitMix64) -> VersionVector {
        var vector = VersionVector()
        for n in 1...5 where Bool.random(using: &rng) {
            vector[.fixture(UInt8(n))] = UInt64.random(in: 0...6, using: &rng)
        }
        return vector
    }

    @Test(arguments: seeds) func mergeIsCommutativeAssociativeIdempotent(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let x = Self.randomVector(&rng)
        let y = Self.randomVector(&rng)
        let z = Self.randomVector(&rng)
        #expect(x.merging(y) == y.merging(x))
        #expect(x.merging(y).merging(z) == x.merging(y.merging(z)))
        #expect(x.merging(x) == x)
        // The merge is the least upper bound: above both, and below any other upper bound.
        let join = x.merging(y)
        #expect(join.dominates(x) && join.dominates(y))
        #expect(x.merging(y).merging(z).dominates(join))
    }

    @Test(arguments: seeds) func compareIsConsistentBothWays(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let x = Self.randomVector(&rng)
        let y = Self.randomVector(&rng)
        let mirrored: [CausalOrder: CausalOrder] = [
            .equal: .equal, .before: .after, .after: .before, .concurrent: .concurrent,
        ]
        #expect(mirrored[x.compare(to: y)] == y.compare(to: x))
        #expect((x.compare(to: y) == .equal) == (x == y))
        #expect(x.compare(to: x.merging(y)) != .after)
    }

    @Test(arguments: seeds) func sendingTheMissingRangesBringsTheOtherSideUpToTheMerge(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let mine = Self.randomVector(&rng)
        var theirs = Self.randomVector(&rng)
        let target = mine.merging(theirs)
        for range in mine.ranges(missingFrom: theirs) {
            #expect(range.seqs.lowerBound == theirs[range.origin] + 1)
            theirs[range.origin] = range.seqs.upperBound
        }
        #expect(theirs == target)
    }
}
