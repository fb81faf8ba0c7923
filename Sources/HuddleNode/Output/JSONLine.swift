import HuddleCore

/// A JSON value for the `--json` output: objects keep their keys in the order given (so `"type"`
/// comes first), and ``render()`` writes everything on one line.
///
/// Strings are escaped for JSON and also so that a JSON line `cat`ed to a terminal cannot move
/// the cursor or flip the text direction: quotes and backslashes are escaped, and every C0, DEL,
/// C1, bidi override/isolate and line/paragraph separator is written as `\uXXXX` (which any JSON
/// parser turns back into the same character).
///
/// ```swift
/// JSONLine.object([("type", "info"), ("message", "hi\n")]).render()   // {"type":"info","message":"hi\u000a"}
/// ```
enum JSONLine: Equatable, Sendable {
    case string(String)
    case int(Int64)
    case bool(Bool)
    /// A number with a fraction (a confidence, a sigma); not finite is written `null`.
    case double(Double)
    case null
    case array([JSONLine])
    case object([(String, JSONLine)])

    /// One line of JSON, without the newline.
    func render() -> String {
        var out = ""
        out.reserveCapacity(256)
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .string(let text): Self.writeString(text, to: &out)
        case .int(let value): out += String(value)
        case .bool(let value): out += value ? "true" : "false"
        case .double(let value): out += value.isFinite ? "\(value)" : "null"
        case .null: out += "null"
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.write(to: &out)
            }
            out += "]"
        case .object(let fields):
            out += "{"
            for (index, (key, value)) in fields.enumerated() {
                if index > 0 { out += "," }
                Self.writeString(key, to: &out)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }

    private static func writeString(_ text: String, to out: inout String) {
        out += "\""
        defer { out += "\"" }
        // Most text is printable ASCII with nothing to escape: appended whole, not scalar by
        // scalar (a piped burst spent a tenth of its time here).
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            out += text
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default:
                if scalar.value < 0x20 || TerminalText.isUnsafe(scalar) || scalar.value == 0x2028
                    || scalar.value == 0x2029
                {
                    out += "\\u" + hex4(scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
    }

    private static func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    static func == (lhs: JSONLine, rhs: JSONLine) -> Bool {
        lhs.render() == rhs.render()
    }
}

extension JSONLine: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByNilLiteral
{
    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int64) { self = .int(value) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(nilLiteral: ()) { self = .null }

    /// An integer, or `null`.
    static func int(_ value: Int64?) -> JSONLine { value.map { .int($0) } ?? .null }
    /// A string, or `null`.
    static func string(_ value: String?) -> JSONLine { value.map { .string($0) } ?? .null }
    /// A moment as the JSON lines carry it: ms since the epoch, rounded down; or `null`.
    static func milliseconds(_ moment: WallTime?) -> JSONLine { .int(moment?.millisecondsSinceEpoch) }
    /// A span as the JSON lines carry it: whole ms, rounded down; or `null`.
    static func milliseconds(_ span: TimeSpan?) -> JSONLine { .int(span?.milliseconds) }
}
