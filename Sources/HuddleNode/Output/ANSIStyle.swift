/// The few SGR colours the human output uses. Applied only when the renderer was made with
/// `colors: true` (stdout is a terminal), and always around text already made safe by
/// ``TerminalText``.
enum ANSIStyle: String {
    case bold = "1"
    case dim = "2"
    case red = "31"
    case yellow = "33"
    case cyan = "36"

    /// Colours nicks are drawn from, picked by node id so a person keeps one colour.
    static let nickColors = ["32", "34", "35", "36", "92", "94", "95", "96"]

    static func wrap(_ text: String, code: String) -> String {
        "\u{1B}[\(code)m\(text)\u{1B}[0m"
    }
}
