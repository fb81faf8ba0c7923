public import HuddleCore
import Logging

/// A browse for Huddle nodes over mDNS, apart from a node's own discovery (`huddle rooms`,
/// `huddle doctor`, `/doctor`).
public enum Browse {
    /// The nodes seen within `duration`, by id; `nil`, at once, if no mDNS daemon answers.
    public static func nodes(for duration: Duration) async -> [NodeID: DiscoveredPeer]? {
        var logger = Logger(label: "huddle.browse")
        logger.logLevel = .warning
        let discovery = ServiceDiscovery(logger: logger)
        let events = discovery.start(advertising: nil)
        defer { discovery.stop() }
        return await withTaskGroup(of: [NodeID: DiscoveredPeer]??.self) { group in
            group.addTask {
                var seen: [NodeID: DiscoveredPeer] = [:]
                for await event in events {
                    switch event {
                    case .found(let peer): seen[peer.id] = peer
                    case .lost(let id): seen[id] = nil
                    case .unavailable: return .some(nil)
                    case .available, .alone: continue
                    }
                    if Task.isCancelled { break }
                }
                return seen
            }
            group.addTask {
                try? await Task.sleep(for: duration)
                return nil
            }
            // Whichever ends first: the timer (then cut the browse short and take what it saw),
            // or the browse (no daemon, or its stream ended).
            while let result = await group.next() {
                if let outcome = result {
                    group.cancelAll()
                    return outcome
                }
                group.cancelAll()
            }
            return [:]
        }
    }
}
