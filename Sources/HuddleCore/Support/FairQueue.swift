/// Work waiting its turn, fairly between keys: at most ``atOnce`` items running in all and
/// ``perKey`` for any one key, the keys served in turn, so that one writer's hundred pictures do
/// not hold up another's one. Pure: the shell starts what ``startable()`` gives and reports each
/// one ``finished(_:)``.
///
/// ```swift
/// var waiting = FairQueue<NodeID, PictureFetch>(atOnce: 4, perKey: 2)
/// waiting.add(fetch, for: fetch.origin)
/// for (origin, fetch) in waiting.startable() { start(fetch) { waiting.finished(origin) } }
/// ```
public struct FairQueue<Key: Hashable & Sendable, Item: Sendable>: Sendable {
    public let atOnce: Int
    public let perKey: Int
    private var queues: [Key: [Item]] = [:]
    /// Keys with items waiting, in the order they are served.
    private var turns: [Key] = []
    private var running: [Key: Int] = [:]
    private var runningCount = 0

    public init(atOnce: Int, perKey: Int) {
        precondition(atOnce > 0 && perKey > 0, "a queue that starts nothing never empties")
        self.atOnce = atOnce
        self.perKey = perKey
    }

    /// `item` waits behind `key`'s others.
    public mutating func add(_ item: Item, for key: Key) {
        if queues[key] == nil { turns.append(key) }
        queues[key, default: []].append(item)
    }

    /// One of `key`'s items started by ``startable()`` is done.
    public mutating func finished(_ key: Key) {
        guard let count = running[key] else { return }
        running[key] = count > 1 ? count - 1 : nil
        runningCount -= 1
    }

    /// What may start now, in turn, each counted as running until ``finished(_:)``.
    public mutating func startable() -> [(key: Key, item: Item)] {
        var starting: [(key: Key, item: Item)] = []
        while runningCount < atOnce, let index = turns.firstIndex(where: { running[$0, default: 0] < perKey }) {
            let key = turns.remove(at: index)
            guard var queue = queues.removeValue(forKey: key), !queue.isEmpty else { continue }
            let item = queue.removeFirst()
            if !queue.isEmpty {
                queues[key] = queue
                turns.append(key)
            }
            running[key, default: 0] += 1
            runningCount += 1
            starting.append((key, item))
        }
        return starting
    }

    /// Items waiting (not running).
    public var waitingCount: Int { queues.values.reduce(0) { $0 + $1.count } }
}
