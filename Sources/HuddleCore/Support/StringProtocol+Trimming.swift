extension StringProtocol {
    /// The text without leading and trailing whitespace (Unicode-aware, no Foundation): how
    /// console lines, labels and nicks are cleaned everywhere.
    public func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }) else { return "" }
        let last = lastIndex(where: { !$0.isWhitespace })!
        return String(self[first...last])
    }
}
