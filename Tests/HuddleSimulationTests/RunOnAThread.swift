import Foundation

@testable import HuddleSimulation

/// Runs a simulation on a thread of its own: a run is seconds of CPU, and on the test runner's
/// few cooperative threads it would starve every test that waits on a clock.
func run(_ config: SimulationConfig) async -> SimulationReport {
    await withCheckedContinuation { done in
        Thread {
            var simulation = Simulation(config: config)
            done.resume(returning: simulation.run())
        }.start()
    }
}
