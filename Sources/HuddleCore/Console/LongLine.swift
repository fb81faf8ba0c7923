/// What the console does with a line longer than one message holds (a long paste): sends it as
/// several numbered messages, or refuses it with a reason. Never drops it without a word.
///
/// A chat line is cut into parts of at most ``MessageBudget/limit`` bytes, each numbered `(1/3) `,
/// `(2/3) `…: at the end of a pasted line where one is near, else after a space, else (one
/// unbroken word) between two characters. A `/msg NICK` line is cut the same way, each part a
/// `/msg NICK` line of its own. Any other command is refused: no command takes that much.
///
/// ```swift
/// LongLine.plan(String(repeating: "word ", count: 2_000))   // .send([ "(1/3) word word …", … ])
/// LongLine.plan("/event " + String(repeating: "x", count: 5_000))
/// // .refuse("a command line holds at most 4,096 bytes; this one would be 5,007")
/// ```
public enum LongLine: Equatable, Sendable {
    /// Console lines to run in this order, each within the limit.
    case send([String])
    /// Why nothing is sent, in words.
    case refuse(String)

    /// The plan for `line` (which may hold line breaks, as a paste does); lines within the limit
    /// are sent as they are.
    public static func plan(_ line: String, limit: Int = MessageBudget.limit) -> LongLine {
        let trimmed = line.trimmingWhitespace()
        let flat = flattened(trimmed)
        guard flat.utf8.count > limit else { return .send(flat.isEmpty ? [] : [flat]) }
        guard trimmed.first == "/" else { return .send(parts(of: trimmed, maxBytes: limit)) }
        let prefix = MessageBudget.commandPrefixBytes(Array(trimmed.prefix(MessageBudget.prefixScan)))
        guard prefix > 0 else {
            return .refuse(
                "a command line holds at most \(MessageBudget.grouped(limit)) bytes; "
                    + "this one would be \(MessageBudget.grouped(flat.utf8.count))")
        }
        let utf8 = Array(trimmed.utf8)
        let command = String(decoding: utf8[..<prefix], as: UTF8.self).trimmingWhitespace()
        let text = String(decoding: utf8[prefix...], as: UTF8.self)
        return .send(parts(of: text, maxBytes: limit).map { "\(command) \($0)" })
    }

    /// `text` cut into numbered parts of at most `maxBytes` bytes each (number included), line
    /// breaks turned into spaces; one part, unnumbered, if it fits whole. Linear in `text`.
    public static func parts(of text: String, maxBytes: Int) -> [String] {
        let characters = Array(text)
        let whole = flattened(text.trimmingWhitespace())
        guard whole.utf8.count > maxBytes else { return whole.isEmpty ? [] : [whole] }
        // The number's width depends on how many parts there are: guess, cut, and cut again if
        // the count needs more digits than guessed.
        var digits = 1
        while true {
            let room = maxBytes - ("(/) ".utf8.count + 2 * digits)
            let pieces = cut(characters, maxBytes: max(room, 8))
            let needed = String(pieces.count).count
            if needed <= digits {
                return pieces.enumerated().map { "(\($0.offset + 1)/\(pieces.count)) " + $0.element }
            }
            digits = needed
        }
    }

    /// Greedy cuts of at most `maxBytes` bytes, each at the last line break in the second half of
    /// its span, else the last space there, else where the span ends.
    private static func cut(_ characters: [Character], maxBytes: Int) -> [String] {
        var pieces: [String] = []
        var start = 0
        func skipSpace() {
            while start < characters.count, characters[start].isWhitespace { start += 1 }
        }
        skipSpace()
        while start < characters.count {
            var end = start
            var bytes = 0
            // Each character as it is sent: a line break as ``lineBreak`` (three bytes).
            func size(_ character: Character) -> Int { character.isNewline ? lineBreak.utf8.count : character.utf8.count }
            while end < characters.count, bytes + size(characters[end]) <= maxBytes {
                bytes += size(characters[end])
                end += 1
            }
            if end == start { end += 1 }  // one character larger than a whole part: alone
            var cutAt = end
            if end < characters.count {
                let half = start + (end - start) / 2
                if let lineEnd = (half..<end).last(where: { characters[$0].isNewline }) {
                    cutAt = lineEnd
                } else if let space = (half...end).last(where: { characters[$0].isWhitespace }) {
                    cutAt = space
                }
            }
            let piece = flattened(String(characters[start..<cutAt]).trimmingWhitespace())
            if !piece.isEmpty { pieces.append(piece) }
            start = cutAt
            skipSpace()
        }
        return pieces
    }

    /// How a message carries a line break: U+2028 LINE SEPARATOR, Unicode's line break inside a
    /// text, since no string on the wire holds a control character (``WireText``). Consoles show
    /// the message's lines one under the other; `--json` gives them as `\n`.
    public static let lineBreak: Character = "\u{2028}"

    /// Tabs as spaces and every line break as ``lineBreak`` (a pasted list stays a list); with
    /// `keepingLineBreaks: false`, line breaks as spaces too (a command's argument is one line).
    public static func flattened(_ text: String, keepingLineBreaks: Bool = true) -> String {
        guard text.contains(where: { $0.isNewline || $0 == "\t" }) else { return text }
        return String(text.map { $0 == "\t" || ($0.isNewline && !keepingLineBreaks) ? " " : $0.isNewline ? lineBreak : $0 })
    }
}
