import Foundation
import Testing

@testable import HuddleSimulation

/// Small runs of the simulator: the properties the figures rely on.
@Suite struct SimulationTests {
    @Test func aSeedReplaysTheSameRunMessageForMessage() async {
        let config = SimulationConfig(nodes: 6, latencyMs: 20, loss: 0.2, broadcasts: 40, rate: 20, seed: 7)
        let first = await run(config)
        let second = await run(config)
        #expect(first.trace == second.trace)
        #expect(first.json == second.json)
        var other = config
        other.seed = 8
        #expect(await run(other).trace != first.trace)
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func withoutLossEverythingArrivesOnceAfterOneLinkDelay(seed: UInt64) async {
        let report = await run(SimulationConfig(nodes: 6, latencyMs: 50, broadcasts: 30, rate: 10, seed: seed))
        #expect(report.deliveredFraction == 1)
        #expect(report.duplicatesShown == 0)
        #expect(report.maxMs == 50)
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func aLossyNetworkLosesNothingAndShowsNothingTwice(seed: UInt64) async {
        let report = await run(SimulationConfig(nodes: 8, latencyMs: 30, loss: 0.3, broadcasts: 60, rate: 10, seed: seed))
        #expect(report.deliveredFraction == 1)
        #expect(report.duplicatesShown == 0)
        #expect(report.p50Ms == 30)
    }

    /// Partial reachability (issue 22): a fifth of the pairs cannot reach each other at all, as
    /// across strict NATs; they talk through common peers. Everything arrives, once, within two
    /// link delays and 50 ms, where the anti-entropy round it took before relaying was ~0.5 s.
    /// Measured once every node has probed every other (one peer a period: 20 s for 10 nodes);
    /// before that a blocked pair is found out by its first lost push, repaired in ~0.2 s.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func pairsThatCannotReachEachOtherTalkThroughACommonPeer(seed: UInt64) async {
        var config = SimulationConfig(nodes: 10, latencyMs: 20, broadcasts: 60, rate: 10, seed: seed, warmupSeconds: 20)
        config.unreachable = 0.2
        let report = await run(config)
        #expect(report.unreachablePairs > 0)
        #expect(report.deliveredFraction == 1)
        #expect(report.duplicatesShown == 0)
        #expect(report.p99Ms <= 2 * 20 + 50)
        #expect((report.messagesByKind["relay"] ?? 0) > 0)
    }

    /// The message budget of the broadcast workload (BENCHMARKS.md, Scripts/simulate): 25 nodes,
    /// 100 ms links, no loss, at most 30 messages per broadcast, everything delivered. At least
    /// 24: one to each other node, so the count counts.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func twentyFiveNodesSpendAtMostThirtyMessagesPerBroadcast(seed: UInt64) async {
        let report = await run(SimulationConfig(nodes: 25, latencyMs: 100, broadcasts: 200, rate: 10, seed: seed))
        #expect(report.deliveredFraction == 1)
        #expect(report.duplicatesShown == 0)
        #expect(report.messagesPerBroadcast <= 30, "\(report.messagesByKind)")
        #expect(report.messagesPerBroadcast >= 24)
    }

    @Test func aHealedPartitionCatchesUp() async {
        var config = SimulationConfig(nodes: 8, latencyMs: 20, broadcasts: 60, rate: 10, seed: 3)
        config.partition = .init(nodes: 3, at: 1, seconds: 10)
        let report = await run(config)
        #expect(report.deliveredFraction == 1)
        #expect(report.duplicatesShown == 0)
        #expect(report.allDeliveredAfterHealMs != nil)
        // Broadcasts across the cut waited for the heal.
        #expect(report.maxMs >= 8000)
    }

    @Test func theReportIsOneJSONObjectWithTheFiguresAsked() async {
        let json = await run(SimulationConfig(nodes: 3, latencyMs: 10, broadcasts: 5, seed: 1)).json
        for key in ["delivered_fraction", "msgs_per_broadcast", "p50_ms", "p99_ms", "max_ms", "duplicates_shown",
                    "targets", "trace_sha256"] {
            #expect(json.contains("\"\(key)\":"), "\(key) missing from \(json)")
        }
        #expect(json.hasPrefix("{") && json.hasSuffix("}"))
    }
}
