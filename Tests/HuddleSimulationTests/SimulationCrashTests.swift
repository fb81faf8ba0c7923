import Testing

@testable import HuddleSimulation

/// The order of commits (issue 32), as the simulator exercises it: every write takes 50 ms to land
/// on disk, and nodes are killed at random moments, losing what had not landed, and start again
/// from their disk. The machine's ``CommitGate`` holds what an input caused until its writes land,
/// so nothing a crash loses was ever seen.
@Suite struct SimulationCrashTests {
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func crashesMidCommitNeverShowTwiceNorSignASeqTwice(seed: UInt64) async {
        var config = SimulationConfig(nodes: 6, latencyMs: 20, loss: 0.1, broadcasts: 80, rate: 20, seed: seed)
        config.commitLatencyMs = 50
        config.crashes = .init(count: 8, restartSeconds: 0.5)
        let report = await run(config)
        #expect(report.crashes >= 4)
        // A message shown before the crash and again after it would be shown twice.
        #expect(report.duplicatesShown == 0)
        // What a crash lost before it landed never left the node.
        #expect(report.lostShown == 0)
        #expect(report.seqsReused == 0)
        #expect(report.equivocations == 0)
        // And everything said reached every node, the restarted ones too.
        #expect(report.deliveredFraction == 1)
    }

    /// Power cuts instead of `kill -9`: a node's disk keeps only what was synced, and its events
    /// go out once committed, not synced, so a cut loses events its peers may hold. A node leases
    /// its seqs (``SeqLease``, synced once per block: here, with its join), starts past the lease
    /// after a cut and voids the stretch, so it never signs a seq twice, and every log agrees.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func powerCutsNeverMakeANodeSignASeqTwice(seed: UInt64) async {
        var config = SimulationConfig(nodes: 6, latencyMs: 20, loss: 0.1, broadcasts: 80, rate: 20, seed: seed)
        config.commitLatencyMs = 5
        config.crashes = .init(count: 8, restartSeconds: 0.5, powerCuts: true)
        let report = await run(config)
        #expect(report.crashes >= 4)
        #expect(report.seqsReused == 0)
        #expect(report.equivocations == 0)
        // Everything not lost reached every node; what a cut lost some nodes may have shown. (A
        // message shown just before a cut may be shown again after it: the record that it was
        // shown is committed, not synced. Only `kill -9` is promised never to show one twice.)
        #expect(report.deliveredFraction == 1)
    }

    /// The same run with commits that land at once loses nothing to a crash: the figures above are
    /// the gate's doing, not the latency's absence.
    @Test func aCommitLatencyDelaysWhatWaitsForIt() async {
        var slow = SimulationConfig(nodes: 4, latencyMs: 20, broadcasts: 20, rate: 10, seed: 3)
        slow.commitLatencyMs = 50
        let report = await run(slow)
        #expect(report.deliveredFraction == 1)
        // A message goes out once its origin's commit lands, and is shown once the reader's
        // record of it lands: two commits and one link.
        #expect(report.p50Ms == 20 + 2 * 50)
    }
}
