/// What the interactive console draws, as the bytes to write: conversation lines scroll by above a
/// two-row footer, a status line and the input line (prompt, text, cursor), which stays at the
/// bottom and is redrawn intact after every line printed above it.
///
/// Pure: every method returns the escape sequences and text to write, and tracks nothing but its
/// own layout. The terminal keeps its own scrollback; the only sequences used are CR, LF, cursor
/// up (`CSI A`), cursor back (`CSI D`), erase below (`CSI J`), erase line (`CSI K`), SGR colours
/// and bracketed paste on/off, which every terminal emulator of the last 30 years understands.
///
/// Invariant between calls, once ``begin()`` has run: the cursor is on the input row, at the
/// editor's cursor, and the status row is directly above it. Neither row ever reaches the last
/// column, so the terminal never wraps them.
///
/// ```text
/// 21:03:17 bob: what a catch  (held 2.0 s)
/// * carol is 1.5 s ahead of you
///  superbowl · 2 peers · you: 3.0 s behind alice · 1 waiting, next in 2 s
/// superbowl [Enter = kickoff]> what a ca▌
/// ```
struct ConsoleScreen: Equatable, Sendable {
    /// What the footer shows besides the line being typed.
    struct Footer: Equatable, Sendable {
        /// The status line, plain text.
        var status: String
        /// The current room, if any, shown in the prompt.
        var room: String?
        /// The moment Enter marks, in words ("kickoff", "kickoff +1 more"), if any.
        var offer: String?
        /// A hidden prompt's question ("passphrase for superbowl"): it replaces the prompt, and
        /// the line typed is not shown.
        var secret: String?
        /// A question answered with one key ("send it as 3 messages? Enter = yes, Esc = no"): it
        /// replaces the prompt, and no line is shown.
        var question: String?
        /// How much of one message the line uses, once it nears the limit (`3,900/4,096`): at the
        /// end of the status row, never cut.
        var length: String?

        init(
            status: String = "", room: String? = nil, offer: String? = nil, secret: String? = nil,
            question: String? = nil, length: String? = nil
        ) {
            self.status = status
            self.room = room
            self.offer = offer
            self.secret = secret
            self.question = question
            self.length = length
        }
    }

    private(set) var columns: Int
    private(set) var footer = Footer()
    let colors: Bool
    /// Whether the footer is on screen (between ``begin()`` and ``end()``).
    private(set) var isDrawn = false
    /// First character of the line shown on the input row, when the line is wider than the row.
    private var scroll = 0
    /// The line being typed and the cursor in it, as last drawn.
    private var text: [Character] = []
    private var cursor = 0
    /// How wide the footer's rows were drawn, for a resize to know what the terminal reflowed.
    private var drawnStatusWidth = 0
    private var drawnCursorColumn = 0

    init(columns: Int, colors: Bool) {
        self.columns = max(columns, 8)
        self.colors = colors
    }

    // MARK: Whole-screen operations

    /// Draws the footer for the first time below whatever the terminal shows, and turns on
    /// bracketed paste.
    mutating func begin() -> String {
        isDrawn = true
        return "\u{1b}[?2004h" + footerRows()
    }

    /// Removes the footer and leaves the cursor at the start of an empty line, ready for the
    /// shell's prompt; bracketed paste off.
    mutating func end() -> String {
        guard isDrawn else { return "" }
        isDrawn = false
        return eraseFooter() + "\u{1b}[?2004l"
    }

    /// Prints lines above the footer (each may hold `\n`s) and redraws the footer below them.
    mutating func print(_ lines: [String]) -> String {
        let body = lines.flatMap { $0.split(separator: "\n", omittingEmptySubsequences: false) }
            .map { $0 + "\r\n" }.joined()
        guard isDrawn else { return body }
        return eraseFooter() + body + footerRows()
    }

    /// Replaces the footer's status and prompt; `nil` if nothing changed.
    mutating func update(_ footer: Footer) -> String? {
        guard footer != self.footer else { return nil }
        self.footer = footer
        guard isDrawn else { return nil }
        return eraseFooter() + footerRows()
    }

    /// Draws the input row again after the line or its cursor changed. Costs the row's width,
    /// whatever the line's length.
    mutating func edit(text: [Character], cursor: Int) -> String {
        self.text = text
        self.cursor = cursor
        guard isDrawn else { return "" }
        return "\r" + inputRow()
    }

    /// Adopts a new terminal width and draws the footer again.
    ///
    /// Most terminals (tmux, VTE, kitty, iTerm2, Terminal.app) reflow on resize: a footer row
    /// wider than the new width now takes several rows, and the cursor sits on the one its column
    /// fell into. The erase goes up over all of them, so no piece of the old footer stays behind.
    /// (A terminal that truncates instead, like xterm, loses at most the rows a shrink made up.)
    mutating func resize(columns: Int) -> String {
        let newColumns = max(columns, 8)
        self.columns = newColumns
        guard isDrawn else { return "" }
        let statusRows = max(1, (drawnStatusWidth + newColumns - 1) / newColumns)
        let up = drawnCursorColumn / newColumns + statusRows
        return "\r\u{1b}[\(up)A\u{1b}[J" + footerRows()
    }

    /// Clears the whole screen and draws the footer at the top (Ctrl-L).
    mutating func clear() -> String {
        guard isDrawn else { return "" }
        return "\u{1b}[H\u{1b}[2J" + footerRows()
    }

    // MARK: Rows

    /// From anywhere on the input row: to the start of the status row, erasing both rows.
    private func eraseFooter() -> String {
        "\r\u{1b}[1A\u{1b}[J"
    }

    /// Status row, newline, input row; the cursor ends at the editor's cursor.
    private mutating func footerRows() -> String {
        statusRow() + "\r\n" + inputRow()
    }

    /// Columns a row may use: never the last, so nothing wraps.
    private var usable: Int { columns - 1 }

    /// The status line, not padded: the shorter the row, the less a narrowing terminal reflows.
    private mutating func statusRow() -> String {
        var status = " " + footer.status + " "
        if let length = footer.length {
            let tail = "· " + length + " "
            status = Self.fit(status, columns: max(1, usable - DisplayWidth.of(tail))) + tail
        }
        status = Self.fit(status, columns: usable)
        drawnStatusWidth = DisplayWidth.of(status)
        return colors ? "\u{1b}[7m" + status + "\u{1b}[0m" : status
    }

    /// The prompt: `ROOM> `, `ROOM [Enter = LABEL]> `, or `> ` outside any room.
    var prompt: String {
        if let question = footer.question { return question + " " }
        if let secret = footer.secret { return secret + " (hidden): " }
        var prompt = footer.room ?? ""
        if let offer = footer.offer { prompt += (prompt.isEmpty ? "" : " ") + "[Enter = \(offer)]" }
        return prompt + "> "
    }

    /// The prompt and as much of the line as fits, scrolled so the cursor shows; ends with the
    /// cursor in place.
    private mutating func inputRow() -> String {
        // A prompt must leave a third of the row for typing: the room goes first, then the
        // prompt is cut from the left.
        let roomForPrompt = max(2, usable * 2 / 3)
        var prompt = self.prompt
        if DisplayWidth.of(prompt) > roomForPrompt, let offer = footer.offer {
            prompt = "[Enter = \(offer)]> "
        }
        if DisplayWidth.of(prompt) > roomForPrompt {
            prompt = "…" + Self.fitFromEnd(prompt, columns: roomForPrompt - 1)
        }
        let promptWidth = DisplayWidth.of(prompt)
        let space = max(1, usable - promptWidth)
        let characters = text
        let cursor = min(self.cursor, characters.count)
        // Keep the cursor on screen: no scrolling when it all fits; else scroll left to the cursor,
        // or right until it fits. Every walk here stops within a row's width of characters (each
        // takes a column or two), so a key costs the same on a line of any length.
        if Self.width(of: characters[...], upTo: space) < space { scroll = 0 }
        scroll = min(scroll, characters.count)
        if cursor < scroll { scroll = max(0, cursor - space / 3) }
        // The first character from which the text up to the cursor is narrower than the row.
        var first = cursor
        var before = 0
        while first > scroll {
            let w = DisplayWidth.of(Self.visible(characters[first - 1]))
            if before + w >= space { break }
            before += w
            first -= 1
        }
        scroll = first
        var shown = ""
        var width = 0
        for character in characters[scroll...] {
            let w = DisplayWidth.of(Self.visible(character))
            if width + w > space { break }
            shown.append(Self.visible(character))
            width += w
        }
        let cursorColumn = promptWidth + before
        drawnCursorColumn = cursorColumn
        let back = width + promptWidth - cursorColumn
        return styledPrompt(prompt) + shown + "\u{1b}[K" + (back > 0 ? "\u{1b}[\(back)D" : "")
    }

    private func styledPrompt(_ prompt: String) -> String {
        guard colors else { return prompt }
        return "\u{1b}[1m" + prompt + "\u{1b}[0m"
    }

    // MARK: Fitting text

    /// How a character of the line being typed is drawn: a pasted line break as `↵`, one column.
    static func visible(_ character: Character) -> Character {
        character == "\n" ? "↵" : character
    }

    /// Columns `characters` take, counted only up to `limit` (the rest is not looked at).
    static func width(of characters: ArraySlice<Character>, upTo limit: Int) -> Int {
        var width = 0
        for character in characters {
            width += DisplayWidth.of(visible(character))
            if width >= limit { break }
        }
        return width
    }

    /// The start of `text` that fits in `columns`, with `…` at the end when cut.
    static func fit(_ text: String, columns: Int) -> String {
        guard DisplayWidth.of(text) > columns else { return text }
        var fitted = ""
        var width = 0
        for character in text {
            let w = DisplayWidth.of(character)
            if width + w > columns - 1 { break }
            fitted.append(character)
            width += w
        }
        return fitted + "…"
    }

    /// The end of `text` that fits in `columns`.
    static func fitFromEnd(_ text: String, columns: Int) -> String {
        var fitted: [Character] = []
        var width = 0
        for character in text.reversed() {
            let w = DisplayWidth.of(character)
            if width + w > columns { break }
            fitted.append(character)
            width += w
        }
        return String(fitted.reversed())
    }
}
