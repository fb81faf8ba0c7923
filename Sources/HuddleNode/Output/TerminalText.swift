/// Makes text from other nodes safe to print on a terminal.
///
/// A peer chooses its nick, its messages and its calibration labels; printed raw, an ESC could
/// recolour or clear the reader's terminal and a bidi override could make a line read
/// differently from what it says. Every C0 control (tab and newline included), DEL, C1
/// control, bidi embedding/override (U+202A–U+202E) and bidi isolate (U+2066–U+2069) is
/// replaced by a visible escape.
///
/// ```swift
/// TerminalText.escaped("hi\u{1B}[2J")       // "hi\\x1B[2J" (shown as: hi\x1B[2J)
/// TerminalText.escaped("abc\u{202E}fed")    // "abc\\u202Efed"
/// ```
public enum TerminalText {
    /// `text` with every unsafe character replaced by `\xHH` (controls) or `\uHHHH` (bidi).
    public static func escaped(_ text: some StringProtocol) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return String(text) }
        var out = ""
        for scalar in text.unicodeScalars {
            if isUnsafe(scalar) {
                let digits = String(scalar.value, radix: 16, uppercase: true)
                if scalar.value <= 0xFF {
                    out += "\\x" + (digits.count < 2 ? "0" : "") + digits
                } else {
                    out += "\\u" + digits
                }
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Whether `scalar` must not reach a terminal as it is.
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
