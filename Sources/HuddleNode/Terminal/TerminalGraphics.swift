/// What a terminal can show of a picture, told from its environment as chafa's own tool does:
/// kitty's graphics, iTerm2's, sixels, or none (then Unicode blocks), and how many colours.
/// Inside tmux or screen, blocks: a multiplexer passes no graphics by default.
///
/// ```swift
/// TerminalGraphics(environment: ["TERM": "xterm-kitty"]).pictures   // .kitty
/// ```
struct TerminalGraphics: Equatable {
    enum Pictures: Equatable { case blocks, sixels, kitty, iTerm2 }

    var pictures: Pictures
    /// chafa's canvas mode: truecolor (0), 256 colours (1), 16 (3).
    var colours: Int32
    /// `NAME=VALUE` entries, for chafa's terminal database.
    var environment: [String]

    init(environment: [String: String]) {
        self.environment = environment.map { "\($0.key)=\($0.value)" }.sorted()
        let term = environment["TERM"] ?? ""
        let program = environment["TERM_PROGRAM"] ?? ""
        let multiplexed = environment["TMUX"] != nil || term.hasPrefix("screen") || term.hasPrefix("tmux")
        if multiplexed {
            pictures = .blocks
        } else if term == "xterm-kitty" || environment["KITTY_WINDOW_ID"] != nil || program == "ghostty" {
            pictures = .kitty
        } else if program == "iTerm.app" || program == "WezTerm" {
            pictures = .iTerm2
        } else if term.hasPrefix("foot") || term.hasPrefix("mlterm") || term.contains("sixel") || program == "contour" {
            pictures = .sixels
        } else {
            pictures = .blocks
        }
        let colorterm = environment["COLORTERM"] ?? ""
        colours =
            colorterm == "truecolor" || colorterm == "24bit" ? ChafaLibrary.canvasTruecolor
            : term.contains("256color") || multiplexed ? ChafaLibrary.canvas256 : ChafaLibrary.canvas16
    }
}
