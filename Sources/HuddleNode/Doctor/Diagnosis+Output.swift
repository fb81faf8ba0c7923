import Foundation

extension Diagnosis {
    /// For a person: the summary, then one line a check (its fix indented under it).
    ///
    ///     doctor: a firewall rule here drops what friends send to port 7400 ...: remove the rule ...
    ///       ok    mdns          the mDNS daemon answers; 1 other Huddle node announces itself: bob
    ///       fail  firewall      a firewall rule here drops what friends send to port 7400 ...
    ///                           → remove the rule or let the ports in (sudo ufw allow 7400/udp; ...)
    public var text: String {
        var lines = ["doctor: \(summary)"]
        for check in checks {
            lines.append("  " + check.verdict.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)
                + check.name.padding(toLength: 14, withPad: " ", startingAt: 0) + check.detail)
            if let fix = check.fix, check.verdict != .ok { lines.append(String(repeating: " ", count: 24) + "→ " + fix) }
        }
        return lines.joined(separator: "\n")
    }

    /// For a script: `{"summary":…,"verdict":"fail","checks":[{"name":…,"verdict":…,"detail":…,"fix":…}]}`,
    /// with `"type"` too when given (a node's `--json` line: `"type":"doctor"`).
    public func jsonText(type: String? = nil) throws -> String {
        struct Line: Encodable {
            var type: String?
            struct CheckLine: Encodable {
                var name: String
                var verdict: String
                var detail: String
                var fix: String?
            }
            var summary: String
            var verdict: String
            var checks: [CheckLine]
        }
        let line = Line(
            type: type, summary: summary, verdict: worst.rawValue,
            checks: checks.map { .init(name: $0.name, verdict: $0.verdict.rawValue, detail: $0.detail, fix: $0.fix) })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(line), as: UTF8.self)
    }
}
