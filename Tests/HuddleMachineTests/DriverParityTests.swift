import HuddleCore
import HuddleSimulation
import Testing

/// The node, the simulator and the tests' LAN feed one machine through one door and only carry
/// out what it asks (issue 32). So one scenario gives the same outputs through two of them: the
/// simulator runs it with link latency, then `MachineLAN` replays what was said, when and by whom.
@Suite(.offThePool) struct DriverParityTests {
    @Test(arguments: [1, 2, 3] as [UInt64])
    func theSimulatorAndTheTestLANShowAScenarioAlike(seed: UInt64) {
        var simulation = Simulation(config: SimulationConfig(nodes: 3, latencyMs: 20, broadcasts: 12, rate: 5, seed: seed))
        let report = simulation.run()
        #expect(report.script.count == 12)

        var lan = MachineLAN(seed: seed)
        let nodes = (0..<3).map { lan.add("n\($0)") }
        lan.introduceAll()
        var last = report.script[0].at
        for said in report.script {
            lan.advance(said.at - last)
            last = said.at
            lan.on(nodes[said.origin]) { $0.handle(.consoleLine(said.text, at: $1.wall), now: $1) }
            lan.deliverAll()
        }
        lan.advance(.seconds(2))
        for node in 0..<3 {
            #expect(lan[nodes[node]].messages == report.shownInOrder[node], "node \(node)")
            #expect(lan[nodes[node]].messages.count == 12)
        }
    }
}
