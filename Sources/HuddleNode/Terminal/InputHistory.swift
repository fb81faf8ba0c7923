/// Lines typed into the console, oldest first, at most ``limit`` of them, with the browsing
/// position for Up and Down. Pure; ``InputHistoryFile`` keeps it across restarts.
///
/// Browsing remembers the line being typed: Up from a draft and back Down returns to it. A line
/// equal to the one before it is kept once.
///
/// ```swift
/// var history = InputHistory(entries: ["hello", "/who"])
/// history.older(than: "dra")   // "/who"
/// history.older(than: "/who")  // "hello"
/// history.newer()              // "/who"
/// history.newer()              // "dra": back to the draft
/// ```
struct InputHistory: Equatable, Sendable {
    /// Most lines kept.
    static let defaultLimit = 500

    private(set) var entries: [String]
    let limit: Int
    /// Index into `entries` being shown, or `nil` while on the draft.
    private var position: Int?
    /// What was typed before browsing started.
    private var draft = ""

    init(entries: [String] = [], limit: Int = defaultLimit) {
        self.limit = max(1, limit)
        self.entries = Array(entries.suffix(self.limit))
    }

    /// Records a submitted line (not blank, not a repeat of the last) and stops browsing. Returns
    /// whether it was added.
    @discardableResult
    mutating func add(_ line: String) -> Bool {
        position = nil
        draft = ""
        guard !line.allSatisfy(\.isWhitespace), entries.last != line else { return false }
        entries.append(line)
        if entries.count > limit { entries.removeFirst(entries.count - limit) }
        return true
    }

    /// The line before the one shown, or `nil` at the oldest. `current` is what the editor holds
    /// now: kept as the draft when browsing starts.
    mutating func older(than current: String) -> String? {
        let next: Int
        if let position {
            guard position > 0 else { return nil }
            next = position - 1
        } else {
            guard !entries.isEmpty else { return nil }
            draft = current
            next = entries.count - 1
        }
        position = next
        return entries[next]
    }

    /// The line after the one shown, the draft after the newest, or `nil` when not browsing.
    mutating func newer() -> String? {
        guard let position else { return nil }
        if position + 1 < entries.count {
            self.position = position + 1
            return entries[position + 1]
        }
        self.position = nil
        return draft
    }
}
