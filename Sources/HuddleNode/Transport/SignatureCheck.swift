import Foundation
import HuddleCore

/// Verifies a pull batch's events: one Ed25519 check for each linked run (``LinkedCheck``), the
/// checks of a large batch spread over the machine's cores.
enum SignatureCheck {
    /// Below this many checks one core does them all; splitting costs more than it saves.
    static let parallelThreshold = 64

    /// The events that are authentic, in their original order.
    static func valid(_ events: [Event]) async -> [Event] {
        let check = LinkedCheck(events)
        let verdicts = await verified(check.needed.map { events[$0] })
        return check.authentic(given: verdicts)
    }

    /// Whether each event's own signature checks, in order.
    static func verified(_ events: [Event]) async -> [Bool] {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        guard events.count >= parallelThreshold, cores > 1 else { return events.map(\.hasValidSignature) }
        let chunk = (events.count + cores - 1) / cores
        return await withTaskGroup(of: (Int, [Bool]).self) { group in
            for start in stride(from: 0, to: events.count, by: chunk) {
                let slice = events[start..<min(start + chunk, events.count)]
                group.addTask { (start, slice.map(\.hasValidSignature)) }
            }
            var verdicts = [Bool](repeating: false, count: events.count)
            for await (start, results) in group {
                verdicts.replaceSubrange(start..<start + results.count, with: results)
            }
            return verdicts
        }
    }
}
