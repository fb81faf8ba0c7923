import Foundation
import HuddleCore

/// Verifies events' signatures, spreading a large batch over the machine's cores: Ed25519
/// verification is most of what ingesting a peer's history costs.
enum SignatureCheck {
    /// Below this many events one core does it all; splitting costs more than it saves.
    static let parallelThreshold = 64

    /// The events whose signatures verify, in their original order.
    static func valid(_ events: [Event]) async -> [Event] {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        guard events.count >= parallelThreshold, cores > 1 else { return events.filter(\.hasValidSignature) }
        let chunk = (events.count + cores - 1) / cores
        let verdicts = await withTaskGroup(of: (Int, [Bool]).self) { group in
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
        return zip(events, verdicts).compactMap { $1 ? $0 : nil }
    }
}
