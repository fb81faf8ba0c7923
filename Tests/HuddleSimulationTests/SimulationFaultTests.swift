import Foundation
import HuddleCore
import Testing

@testable import HuddleSimulation

/// The simulator's membership faults: nodes that freeze now and then, and one that dies.
@Suite struct SimulationFaultTests {
    /// 25 nodes, 5 % of them (two) freezing for 2 s about every 10 s, node 0 killed 40 s in; two
    /// virtual minutes.
    func stalledRoom(seed: UInt64, loss: Double = 0) -> SimulationConfig {
        var config = SimulationConfig(nodes: 25, latencyMs: 100, loss: loss, broadcasts: 20, rate: 1, seed: seed)
        config.stalls = .init(fraction: 0.05, seconds: 2, every: 10)
        config.kill = .init(node: 0, at: 40)
        config.minimumSeconds = 120
        return config
    }

    @Test(arguments: [1, 2] as [UInt64])
    func frozenNodesRaiseNoAlarmAndTheDeadOneIsGoneEverywhereWithinTenSeconds(seed: UInt64) async {
        let report = await run(stalledRoom(seed: seed))
        #expect(report.stallingNodes == 2)
        #expect(report.stalls >= 10)
        #expect(report.falseAlarms.isEmpty, "\(report.falseAlarms.prefix(5))")
        let times = report.killDetectionMs ?? []
        #expect(times.count == 24)
        #expect(times.allSatisfy { ($0 ?? .infinity) <= 10_000 }, "\(times)")
        #expect(report.deliveredFraction == 1)
    }

    @Test func atTwentyPercentLossFrozenNodesRaiseFarFewerAlarmsAndTheDeadOneIsStillGoneInTime() async {
        // Two freezes close together, with the few acks sent in between lost, can still add up
        // to 2.5 s of silence (and the suspicion then spreads to everyone until the node
        // refutes): far rarer than plain SWIM's alarms, not gone.
        let report = await run(stalledRoom(seed: 3, loss: 0.2))
        var plain = stalledRoom(seed: 3, loss: 0.2)
        plain.swim = true
        let swim = await run(plain)
        #expect(report.falseAlarms.count * 20 <= swim.falseAlarms.count, "\(report.falseAlarms.count) vs \(swim.falseAlarms.count)")
        #expect((report.killDetectedEverywhereMs ?? .infinity) <= 10_000)
    }

    @Test func plainSWIMCallsTheFrozenNodesNotAnswering() async {
        var config = stalledRoom(seed: 1)
        config.swim = true
        let report = await run(config)
        #expect(report.falseAlarms.count > 10)
        #expect(report.falseAlarms.allSatisfy { $0.about != 0 })  // the dead node's alarms are not false
        #expect(report.falsealarmsPerNodeHourIsConsistent)
    }

    @Test func frozenNodesReadWhatWaitedForThemAndMissNothing() async {
        var config = SimulationConfig(nodes: 8, latencyMs: 20, broadcasts: 60, rate: 5, seed: 4)
        config.stalls = .init(fraction: 0.25, seconds: 2, every: 3)
        let report = await run(config)
        #expect(report.stalls > 0)
        #expect(report.deliveredFraction == 1)
        #expect(report.duplicatesShown == 0)
        #expect(report.maxMs >= 1_000)  // some messages waited out a freeze
    }
}

extension SimulationReport {
    /// Alarms over node-hours (the dead node excluded) is what the per-node-hour figure says.
    fileprivate var falsealarmsPerNodeHourIsConsistent: Bool {
        let nodeHours = Double(config.nodes - 1) * virtualSeconds / 3600
        return abs(falseAlarmsPerNodeHour - Double(falseAlarms.count) / nodeHours) < 1e-9
    }
}
