/// The line being typed on the interactive console and the keys that edit it, emacs-style as in
/// readline: Left/Right (Ctrl-B/F), Home/End (Ctrl-A/E), Backspace/Delete (Ctrl-D on a non-empty
/// line), Ctrl-U/K/W and Alt-D kill, Ctrl-Y yanks, Ctrl-Left/Right and Alt-B/F move by words,
/// Up/Down (Ctrl-P/N) browse the history; Ctrl-C clears a half-typed line. The cursor moves by `Character`, so an emoji or an
/// accented letter is one step.
///
/// Pure: ``handle(_:at:)`` takes a key and a clock reading and says what the console should do.
///
/// ```swift
/// var editor = LineEditor()
/// editor.handle(.text("what a catc"), at: 0)   // .none
/// editor.handle(.backspace, at: 0)             // .none; text "what a cat"
/// editor.handle(.enter, at: 0)                 // .submit("what a cat")
/// editor.handle(.enter, at: 5_000)             // .markOffered: Enter on an empty line
/// ```
struct LineEditor: Equatable, Sendable {
    /// The longest line kept, in UTF-8 bytes; typing beyond it rings the bell. The wire carries
    /// 4,096 bytes of chat text, so this leaves room for a command in front.
    static let maximumBytes = 8 * 1024

    /// An Enter on an empty line this soon after sending a line is taken for a double press, not
    /// a mark: marking by accident is worse than pressing Enter again.
    static let doublePressWindow: Int64 = 400

    /// What the console does after a key.
    enum Action: Equatable, Sendable {
        /// Nothing beyond redrawing the input line.
        case none
        /// Send this line (never empty).
        case submit(String)
        /// Mark the moment the prompt offers: Enter on an empty line.
        case markOffered
        /// Mark the moment the prompt offers and keep the line: the hot key (Ctrl-T).
        case markHotKey
        /// The stream paused (Ctrl-S) or plays again (Ctrl-Q); the line stays.
        case pause
        case resume
        /// Complete the word before the cursor (Tab).
        case complete
        /// Quit: Ctrl-C or Ctrl-D on an empty line.
        case quit
        /// Stop the process like a shell job (Ctrl-Z).
        case suspend
        /// Clear the screen and draw again (Ctrl-L).
        case redraw
        /// The key did nothing here.
        case bell
    }

    private(set) var text = ""
    /// Characters before the cursor.
    private(set) var cursor = 0
    var history: InputHistory
    /// What the last kill removed, for Ctrl-Y.
    private var killed = ""
    /// When a line was last submitted (the caller's clock, ms).
    private var lastSubmit: Int64 = .min / 2

    init(history: InputHistory = InputHistory()) {
        self.history = history
    }

    /// The text before the cursor, for completion.
    var beforeCursor: String { String(Array(text).prefix(cursor)) }

    /// Applies one key typed when the caller's clock read `now` (ms).
    mutating func handle(_ key: TerminalKey, at now: Int64) -> Action {
        switch key {
        case .text(let typed), .paste(let typed):
            return insert(typed) ? .none : .bell
        case .enter:
            guard !text.allSatisfy(\.isWhitespace) else {
                text = ""
                cursor = 0
                return now - lastSubmit < Self.doublePressWindow ? .bell : .markOffered
            }
            let line = text
            history.add(line)
            text = ""
            cursor = 0
            lastSubmit = now
            return .submit(line)
        case .tab: return .complete
        case .backspace:
            guard cursor > 0 else { return .bell }
            remove(from: cursor - 1, to: cursor)
        case .delete:
            guard cursor < count else { return .bell }
            remove(from: cursor, to: cursor + 1)
        case .control("d"):
            if text.isEmpty { return .quit }
            guard cursor < count else { return .bell }
            remove(from: cursor, to: cursor + 1)
        case .left, .control("b"):
            guard cursor > 0 else { return .bell }
            cursor -= 1
        case .right, .control("f"):
            guard cursor < count else { return .bell }
            cursor += 1
        case .home, .control("a"): cursor = 0
        case .end, .control("e"): cursor = count
        case .wordLeft: cursor = wordStart(before: cursor, isWord: Self.isWordCharacter)
        case .wordRight: cursor = wordEnd(after: cursor)
        case .control("u"): kill(from: 0, to: cursor)
        case .control("k"): kill(from: cursor, to: count)
        case .control("w"):
            kill(from: wordStart(before: cursor, isWord: Self.isNotWhitespace), to: cursor)
        case .altBackspace:
            kill(from: wordStart(before: cursor, isWord: Self.isWordCharacter), to: cursor)
        case .alt("d"): kill(from: cursor, to: wordEnd(after: cursor))
        case .control("y"): return insert(killed) ? .none : .bell
        case .up, .control("p"):
            guard let older = history.older(than: text) else { return .bell }
            replace(with: older)
        case .down, .control("n"):
            guard let newer = history.newer() else { return .bell }
            replace(with: newer)
        case .control("t"): return .markHotKey
        case .control("s"): return .pause
        case .control("q"): return .resume
        case .control("c"):
            // As in a shell: Ctrl-C abandons a half-typed line (Ctrl-Y brings it back); on an
            // empty line it quits.
            if text.isEmpty { return .quit }
            kill(from: 0, to: count)
        case .control("z"): return .suspend
        case .control("l"): return .redraw
        case .escape, .ignored, .alt, .control: return .bell
        }
        return .none
    }

    /// Puts a completion in place of the word before the cursor.
    mutating func complete(replacing length: Int, with replacement: String) {
        let start = max(0, cursor - length)
        remove(from: start, to: cursor)
        _ = insert(replacement)
    }

    // MARK: Editing

    private var count: Int { text.count }

    /// Inserts printable text at the cursor; `false` if it would make the line too long.
    private mutating func insert(_ typed: String) -> Bool {
        let printable = String(String.UnicodeScalarView(typed.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7f }))
        guard !printable.isEmpty else { return false }
        guard text.utf8.count + printable.utf8.count <= Self.maximumBytes else { return false }
        let characters = Array(text)
        let after = String(characters[cursor...])
        text = String(characters[..<cursor]) + printable + after
        // Counted from the end: text joined at the seam may form one character of two.
        cursor = text.count - after.count
        return true
    }

    private mutating func remove(from start: Int, to end: Int) {
        guard start < end else { return }
        var characters = Array(text)
        characters.removeSubrange(start..<end)
        text = String(characters)
        cursor = start
    }

    private mutating func kill(from start: Int, to end: Int) {
        guard start < end else { return }
        killed = String(Array(text)[start..<end])
        remove(from: start, to: end)
    }

    private mutating func replace(with line: String) {
        text = line
        cursor = line.count
    }

    private static func isWordCharacter(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || character == "_"
    }

    /// Ctrl-W's words: anything between spaces, as in a shell.
    private static func isNotWhitespace(_ character: Character) -> Bool {
        !character.isWhitespace
    }

    /// Where the word before `index` starts: back over non-word characters, then over word ones.
    private func wordStart(before index: Int, isWord: (Character) -> Bool) -> Int {
        let characters = Array(text)
        var position = index
        while position > 0, !isWord(characters[position - 1]) { position -= 1 }
        while position > 0, isWord(characters[position - 1]) { position -= 1 }
        return position
    }

    /// Where the word after `index` ends: over non-word characters, then over word ones.
    private func wordEnd(after index: Int) -> Int {
        let characters = Array(text)
        var position = index
        while position < characters.count, !Self.isWordCharacter(characters[position]) { position += 1 }
        while position < characters.count, Self.isWordCharacter(characters[position]) { position += 1 }
        return position
    }
}
