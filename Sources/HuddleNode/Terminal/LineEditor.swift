import HuddleCore

/// The line being typed on the interactive console and the keys that edit it, emacs-style as in
/// readline: Left/Right (Ctrl-B/F), Home/End (Ctrl-A/E), Backspace/Delete (Ctrl-D on a non-empty
/// line), Ctrl-U/K/W and Alt-D kill, Ctrl-Y yanks, Ctrl-Left/Right and Alt-B/F move by words,
/// Up/Down (Ctrl-P/N) browse the history; Ctrl-C clears a half-typed line. The cursor moves by
/// `Character`, so an emoji or an accented letter is one step.
///
/// A line holds one message (``MessageBudget``): a key that would take it past the limit rings
/// the bell, and a paste that would is handed back (``Action/overflow(_:)``) for the console to
/// offer as several messages. A paste keeps its line breaks; typing never makes one.
///
/// Every key costs time in proportion to what it changes, never to the whole line more than
/// once: the line is an array of `Character`s (a cursor is an index, not a walk from the start)
/// and its length in bytes is kept as it changes.
///
/// Pure: ``handle(_:at:)`` takes a key and a clock reading and says what the console should do.
///
/// ```swift
/// var editor = LineEditor()
/// editor.handle(.text("what a catc"), at: t)           // .none
/// editor.handle(.backspace, at: t)                     // .none; text "what a cat"
/// editor.handle(.enter, at: t)                         // .submit("what a cat")
/// editor.handle(.enter, at: t + .seconds(5))           // .markOffered: Enter on an empty line
/// ```
struct LineEditor: Equatable, Sendable {
    /// An Enter on an empty line this soon after sending a line is taken for a double press, not
    /// a mark: marking by accident is worse than pressing Enter again.
    static let doublePressWindow = TimeSpan.milliseconds(400)

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
        /// A paste that would take the line past one message: the line as it would be with it
        /// (line breaks kept). The line is unchanged.
        case overflow(String)
        /// A paste beyond what the console takes at all (``KeyDecoder/maximumPasteBytes``), of this
        /// many bytes. The line is unchanged.
        case pasteTooLong(bytes: Int)
        /// Typed text would take the line past one message: it was not added.
        case full
        /// The key did nothing here.
        case bell
    }

    /// The line, one element per `Character`.
    private(set) var characters: [Character] = []
    /// Characters before the cursor.
    private(set) var cursor = 0
    /// The line's length in UTF-8 bytes.
    private(set) var byteCount = 0
    var history: InputHistory
    /// What the last kill removed, for Ctrl-Y.
    private var killed = ""
    /// When a line was last submitted (the caller's clock, ms).
    private var lastSubmit = WallTime.distantPast

    init(history: InputHistory = InputHistory()) {
        self.history = history
    }

    /// The line as text.
    var text: String { String(characters) }

    /// The text before the cursor, for completion.
    var beforeCursor: String { String(characters[..<cursor]) }

    /// Bytes at the start of the line that are a command's, not its message (`/msg bob `).
    var commandPrefixBytes: Int { MessageBudget.commandPrefixBytes(characters) }

    /// Bytes of the message this line would send.
    var messageBytes: Int { MessageBudget.messageBytes(lineBytes: byteCount, prefixBytes: commandPrefixBytes) }

    /// Applies one key typed when the caller's clock read `now`.
    mutating func handle(_ key: TerminalKey, at now: WallTime) -> Action {
        switch key {
        case .text(let typed):
            let printable = Self.printable(typed)
            guard !printable.isEmpty else { return .bell }
            if insert(printable) { return .none }
            // As much as fits goes in (a paste the terminal did not bracket comes as typing).
            let room = MessageBudget.lineLimit(prefixBytes: commandPrefixBytes) - byteCount
            _ = insert(Self.prefix(of: printable, bytes: room))
            return .full
        case .paste(let pasted):
            // A pasted list keeps its line breaks (shown as ↵ on the input row): it is sent as one
            // message whose lines show one under the other.
            let printable = Self.printable(pasted, keepingLineBreaks: true)
            guard !printable.isEmpty else { return .bell }
            if insert(printable) { return .none }
            return .overflow(String(characters[..<cursor]) + printable + String(characters[cursor...]))
        case .pasteTooLong(let bytes):
            return .pasteTooLong(bytes: bytes)
        case .enter:
            guard !characters.allSatisfy(\.isWhitespace) else {
                clear()
                return now - lastSubmit < Self.doublePressWindow ? .bell : .markOffered
            }
            let line = text
            history.add(line)
            clear()
            lastSubmit = now
            return .submit(line)
        case .tab: return .complete
        case .backspace:
            guard cursor > 0 else { return .bell }
            remove(from: cursor - 1, to: cursor)
        case .delete:
            guard cursor < characters.count else { return .bell }
            remove(from: cursor, to: cursor + 1)
        case .control("d"):
            if characters.isEmpty { return .quit }
            guard cursor < characters.count else { return .bell }
            remove(from: cursor, to: cursor + 1)
        case .left, .control("b"):
            guard cursor > 0 else { return .bell }
            cursor -= 1
        case .right, .control("f"):
            guard cursor < characters.count else { return .bell }
            cursor += 1
        case .home, .control("a"): cursor = 0
        case .end, .control("e"): cursor = characters.count
        case .wordLeft: cursor = wordStart(before: cursor, isWord: Self.isWordCharacter)
        case .wordRight: cursor = wordEnd(after: cursor)
        case .control("u"): kill(from: 0, to: cursor)
        case .control("k"): kill(from: cursor, to: characters.count)
        case .control("w"):
            kill(from: wordStart(before: cursor, isWord: Self.isNotWhitespace), to: cursor)
        case .altBackspace:
            kill(from: wordStart(before: cursor, isWord: Self.isWordCharacter), to: cursor)
        case .alt("d"): kill(from: cursor, to: wordEnd(after: cursor))
        case .control("y"):
            guard !killed.isEmpty else { return .bell }
            return insert(killed) ? .none : .full
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
            if characters.isEmpty { return .quit }
            kill(from: 0, to: characters.count)
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
        _ = insert(Self.printable(replacement))
    }

    /// The line went out some other way at `now` (a long paste's parts): empties it, and an
    /// Enter right after is a double press, not a mark.
    mutating func sent(at now: WallTime) {
        clear()
        lastSubmit = now
    }

    /// Empties the line (the kill ring stays).
    mutating func clear() {
        characters.removeAll()
        cursor = 0
        byteCount = 0
    }

    // MARK: Editing

    /// `typed` without control characters; line breaks become spaces unless kept.
    static func printable(_ typed: String, keepingLineBreaks: Bool = false) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in typed.unicodeScalars {
            if scalar == "\n" {
                scalars.append(keepingLineBreaks ? "\n" : " ")
            } else if scalar.value >= 0x20, scalar.value != 0x7f {
                scalars.append(scalar)
            }
        }
        return String(scalars)
    }

    /// The longest start of `text` within `bytes` bytes, in whole characters.
    private static func prefix(of text: String, bytes: Int) -> String {
        var taken = 0
        var end = text.startIndex
        for index in text.indices {
            let size = text[index].utf8.count
            guard taken + size <= bytes else { break }
            taken += size
            end = text.index(after: index)
        }
        return String(text[..<end])
    }

    /// Inserts printable text at the cursor; `false` if it would take the line past one message.
    /// Costs the inserted text plus moving what follows the cursor, once.
    private mutating func insert(_ printable: String) -> Bool {
        let added = printable.utf8.count
        guard added > 0 else { return false }
        // The limit counts the message, not a `/msg NICK ` in front of it.
        let scan = MessageBudget.prefixScan
        let prefix = cursor < scan
            ? MessageBudget.commandPrefixBytes(characters[..<cursor] + Array(printable.prefix(scan)))
            : commandPrefixBytes
        guard byteCount + added <= MessageBudget.lineLimit(prefixBytes: max(prefix, commandPrefixBytes)) else {
            return false
        }
        // Text joined at the seams may form one character of two (an accent typed after "e"):
        // the characters on either side are formed again with it.
        let low = max(0, cursor - 1)
        let high = min(characters.count, cursor + 1)
        let after = high - cursor
        let joined = Array(String(characters[low..<cursor]) + printable + String(characters[cursor..<high]))
        characters.replaceSubrange(low..<high, with: joined)
        // Counted from the end: the character after the cursor stays after it.
        cursor = max(low, low + joined.count - after)
        byteCount += added
        return true
    }

    private mutating func remove(from start: Int, to end: Int) {
        guard start < end else { return }
        byteCount -= characters[start..<end].reduce(0) { $0 + $1.utf8.count }
        characters.removeSubrange(start..<end)
        cursor = start
    }

    private mutating func kill(from start: Int, to end: Int) {
        guard start < end else { return }
        killed = String(characters[start..<end])
        remove(from: start, to: end)
    }

    private mutating func replace(with line: String) {
        characters = Array(line)
        cursor = characters.count
        byteCount = line.utf8.count
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
        var position = index
        while position > 0, !isWord(characters[position - 1]) { position -= 1 }
        while position > 0, isWord(characters[position - 1]) { position -= 1 }
        return position
    }

    /// Where the word after `index` ends: over non-word characters, then over word ones.
    private func wordEnd(after index: Int) -> Int {
        var position = index
        while position < characters.count, !Self.isWordCharacter(characters[position]) { position += 1 }
        while position < characters.count, Self.isWordCharacter(characters[position]) { position += 1 }
        return position
    }
}
