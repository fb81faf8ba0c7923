import Foundation

extension Diagnosis {
    /// For a person: the summary, then one line a check (its fix indented under it). Given a
    /// terminal's `width`, each is wrapped at spaces to fit it, continued under its own start;
    /// without one (a pipe, a file, a console that wraps for itself) a line is one line.
    ///
    ///     doctor: a firewall rule here drops what friends send to port 7400 ...: remove the rule ...
    ///       ok    mdns          the mDNS daemon answers; 1 other Huddle node announces itself: bob
    ///       fail  firewall      a firewall rule here drops what friends send to port 7400 ...
    ///                           → remove the rule or let the ports in (sudo ufw allow 7400/udp; ...)
    public func text(width: Int? = nil) -> String {
        let column = 24
        var lines = Self.wrapped("doctor: \(summary)", width: width, indent: 8)
        for check in checks {
            let head = "  " + check.verdict.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)
                + check.name.padding(toLength: column - 10, withPad: " ", startingAt: 0)
            lines += Self.wrapped(head + check.detail, width: width, indent: column)
            if let fix = check.fix, check.verdict != .ok {
                lines += Self.wrapped(String(repeating: " ", count: column) + "→ " + fix, width: width, indent: column + 2)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// For a phone's page, whose narrow screen wraps and whose letters are not all as wide: no
    /// columns, one line a check with its fix under it.
    ///
    ///     doctor: a firewall rule here drops what friends send to port 7400 ...: remove the rule ...
    ///     ok · mdns: the mDNS daemon answers; 1 other Huddle node announces itself: bob
    ///     fail · firewall: a firewall rule here drops what friends send to port 7400 ...
    ///       → remove the rule or let the ports in (sudo ufw allow 7400/udp; ...)
    public var listText: String {
        var lines = ["doctor: \(summary)"]
        for check in checks {
            lines.append("\(check.verdict.rawValue) · \(check.name): \(check.detail)")
            if let fix = check.fix, check.verdict != .ok { lines.append("  → " + fix) }
        }
        return lines.joined(separator: "\n")
    }

    /// `line` cut at spaces into lines of at most `width` characters (a word longer than the
    /// room left stays whole), each after the first `indent` spaces in; `nil` width: as it is.
    static func wrapped(_ line: String, width: Int?, indent: Int) -> [String] {
        guard let width, width > indent + 20, line.count > width else { return [line] }
        let lead = String(line.prefix { $0 == " " })
        var lines: [String] = []
        var current = lead
        var holdsAWord = false
        for word in line.dropFirst(lead.count).split(separator: " ", omittingEmptySubsequences: false) {
            if holdsAWord, current.count + 1 + word.count > width {
                lines.append(current)
                current = String(repeating: " ", count: indent) + word
            } else {
                current += (holdsAWord ? " " : "") + word
            }
            holdsAWord = true
        }
        lines.append(current)
        return lines
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
