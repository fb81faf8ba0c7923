public import HuddleCore

/// What the node tells the interactive console: the status line in words, the prompt's room and
/// offer, and what Tab completes (the machine's ``ConsoleView``, worded).
public struct ConsoleContext: Sendable, Equatable {
    public var status: String
    public var room: String?
    public var offer: PendingMarks.Offer?
    public var words: ConsoleCompletion.Words

    public init(status: String, room: String?, offer: PendingMarks.Offer?, words: ConsoleCompletion.Words) {
        self.status = status
        self.room = room
        self.offer = offer
        self.words = words
    }

    public init(_ view: ConsoleView) {
        self.init(status: RoomGlance.statusLine(of: view.status), room: view.room, offer: view.offer, words: view.words)
    }
}

/// The interactive console without its terminal: the line editor, the screen layout and what the
/// node last said, turning keys into screen updates and inputs for the node. Pure, so a test can
/// type bytes and read the screen; ``InteractiveConsole`` runs one on a real terminal.
///
/// ```swift
/// var session = ConsoleSession(columns: 80, colors: false)
/// var bytes = session.begin()
/// let reaction = session.handle([.text("hi"), .enter], at: now)
/// bytes += reaction.output          // the echo, the cleared line
/// reaction.inputs                   // [.line("hi", at: now)]
/// ```
struct ConsoleSession: Sendable {
    private(set) var screen: ConsoleScreen
    private(set) var editor: LineEditor
    private(set) var context: ConsoleContext?
    /// While a hidden prompt is up: its question, and the line that was being typed, which
    /// comes back once the prompt is answered.
    private var secret: (question: String, stashed: LineEditor)?
    /// The line as it stood at a Tab that could complete nothing more, and whether its choices
    /// were listed: the first such Tab rings, the second lists them, once.
    private var tabbed: (line: String, listed: Bool)?
    /// A paste longer than one message, offered as these lines (numbered parts) until Enter
    /// sends them or Escape puts them away; the line being typed stays as it was.
    private var offered: [String]?
    /// Whether the line has been said to be full since it last had room: said once, not at
    /// every key.
    private var toldFull = false

    /// What keys did.
    struct Reaction: Equatable, Sendable {
        /// Bytes to write to the terminal.
        var output = ""
        /// What the node should act on.
        var inputs: [ConsoleInput] = []
        /// Lines submitted, for the history file.
        var submitted: [String] = []
        /// Ctrl-Z: stop like a shell job (the keys after it were not handled).
        var suspend = false
        /// Ctrl-C or Ctrl-D: quit (the keys after it were not handled).
        var quit = false
    }

    init(columns: Int, colors: Bool, history: InputHistory = InputHistory()) {
        screen = ConsoleScreen(columns: columns, colors: colors)
        editor = LineEditor(history: history)
    }

    /// Draws the footer (at start, and again after a suspend).
    mutating func begin() -> String {
        screen.begin() + drawLine()
    }

    /// The input row for the line being typed (nothing of it at a hidden prompt or a question),
    /// and the status row too when the line's count of bytes changed there.
    private mutating func drawLine() -> String {
        let footer = redrawFooter()
        let hidden = secret != nil || offered != nil
        let row = hidden ? screen.edit(text: [], cursor: 0) : screen.edit(text: editor.characters, cursor: editor.cursor)
        return footer + row
    }

    /// Puts up a hidden prompt: `question` replaces the prompt, what is typed next is not shown
    /// and not kept in history, and Enter hands it over as ``ConsoleInput/secret(_:)``. The line
    /// being typed is put aside and comes back after.
    mutating func askSecret(_ question: String) -> String {
        if secret == nil { secret = (question, editor) }
        secret?.question = question
        editor = LineEditor(history: InputHistory())
        return redrawFooter() + drawLine()
    }

    /// Takes a hidden prompt down that was answered elsewhere (a paired page gave the
    /// passphrase): the line put aside comes back, and what was typed at the prompt is dropped.
    mutating func withdrawSecret() -> String {
        guard secret != nil else { return "" }
        endSecret()
        return redrawFooter() + drawLine()
    }

    /// Takes the hidden prompt down and gives back the line that was put aside.
    private mutating func endSecret() {
        guard let stashed = secret?.stashed else { return }
        secret = nil
        editor = stashed
    }

    /// Erases the footer and gives the terminal back.
    mutating func end() -> String {
        screen.end()
    }

    /// Prints a line above the footer.
    mutating func print(_ line: String) -> String {
        screen.print([line])
    }

    /// A new terminal width.
    mutating func resize(columns: Int) -> String {
        screen.resize(columns: columns)
    }

    /// Takes the node's new context; returns what to redraw (possibly nothing).
    mutating func update(_ context: ConsoleContext) -> String {
        guard context != self.context else { return "" }
        self.context = context
        return redrawFooter()
    }

    private mutating func redrawFooter() -> String {
        let offer = context?.offer.map { offer in
            TerminalText.escaped(offer.label.normalized) + (offer.more > 0 ? " +\(offer.more) more" : "")
        }
        let question = offered.map { lines in
            "send it as \(lines.count) messages? Enter = yes, Esc = no"
        }
        let length = secret == nil && offered == nil ? MessageBudget.counter(forMessageBytes: editor.messageBytes) : nil
        let footer = ConsoleScreen.Footer(
            status: TerminalText.escaped(context?.status ?? ""), room: context?.room.map(TerminalText.escaped),
            offer: offer, secret: secret.map { TerminalText.escaped($0.question) }, question: question, length: length)
        return screen.update(footer) ?? ""
    }

    /// Applies keys that arrived when the clock read `at`, up to a quit or a suspend.
    mutating func handle(_ keys: [TerminalKey], at: WallTime) -> Reaction {
        var reaction = Reaction()
        for key in keys {
            handle(key, at: at, into: &reaction)
            if reaction.quit || reaction.suspend { break }
        }
        return reaction
    }

    private mutating func handle(_ key: TerminalKey, at: WallTime, into reaction: inout Reaction) {
        if secret != nil { return handleSecret(key, at: at, into: &reaction) }
        if offered != nil { return handleOffer(key, at: at, into: &reaction) }
        let action = editor.handle(key, at: at)
        if editor.messageBytes + 4 < MessageBudget.limit { toldFull = false }
        switch action {
        case .submit(let line):
            reaction.inputs.append(.line(line, at: at))
            reaction.submitted.append(line)
        case .markOffered:
            if let offer = context?.offer {
                reaction.inputs.append(.markOffered(label: offer.label.normalized, at: at))
            }
        case .markHotKey:
            reaction.inputs.append(.markOffered(label: context?.offer?.label.normalized, at: at))
        case .pause:
            reaction.inputs.append(.pause(at: at))
        case .resume:
            reaction.inputs.append(.resume(at: at))
        case .complete:
            // As in a shell: a Tab completes as far as the choices agree; at that point the first
            // Tab rings, the second lists the choices once, in columns of whole words.
            let result = ConsoleCompletion.complete(editor.beforeCursor, words: context?.words ?? .init())
            if result.replacing > 0 || !result.with.isEmpty {
                editor.complete(replacing: result.replacing, with: result.with)
                tabbed = nil
            } else if !result.candidates.isEmpty {
                let line = editor.text
                if let tabbed, tabbed.line == line {
                    if !tabbed.listed {
                        reaction.output += screen.print(Self.columns(result.candidates, width: screen.columns - 1))
                        self.tabbed = (line, true)
                    }
                } else {
                    tabbed = (line, false)
                    reaction.output += "\u{07}"
                }
            }
        case .redraw:
            reaction.output += screen.clear()
        case .quit:
            reaction.inputs.append(.quit)
            reaction.quit = true
        case .suspend:
            reaction.suspend = true
        case .overflow(let line):
            offer(line, into: &reaction)
        case .pasteTooLong(let bytes):
            reaction.output += screen.print([
                "* that paste was \(MessageBudget.grouped(bytes)) bytes; the console takes at most "
                    + "\(MessageBudget.grouped(KeyDecoder.maximumPasteBytes)) at once: nothing was pasted"
            ]) + "\u{07}"
        case .full:
            if !toldFull {
                toldFull = true
                reaction.output += screen.print([
                    "* one message holds \(MessageBudget.grouped(MessageBudget.limit)) bytes and the line is full: "
                        + "the rest was not added (send this line, then type on)"
                ])
            }
            reaction.output += "\u{07}"
        case .none, .bell:
            break
        }
        reaction.output += drawLine()
    }

    /// A paste too long for one message: offered as several, or refused with the reason.
    private mutating func offer(_ line: String, into reaction: inout Reaction) {
        switch LongLine.plan(line) {
        case .refuse(let why):
            reaction.output += screen.print(["* \(why): nothing was pasted"]) + "\u{07}"
        case .send(let lines):
            offered = lines
            let bytes = MessageBudget.grouped(line.utf8.count)
            reaction.output += screen.print([
                "* that paste makes a line of \(bytes) bytes and one message holds "
                    + "\(MessageBudget.grouped(MessageBudget.limit)): Enter sends it as \(lines.count) messages, "
                    + "numbered (1/\(lines.count)) to (\(lines.count)/\(lines.count)); Esc puts it away"
            ])
        }
    }

    /// A key while a long paste is offered: Enter sends its parts (and empties the line they
    /// include), Escape or Ctrl-C puts it away and leaves the line as it was; other keys ring.
    private mutating func handleOffer(_ key: TerminalKey, at: WallTime, into reaction: inout Reaction) {
        switch key {
        case .enter:
            let lines = offered ?? []
            offered = nil
            editor.sent(at: at)
            reaction.inputs += lines.map { .line($0, at: at) }
        case .escape, .control("c"), .control("g"):
            offered = nil
            reaction.output += screen.print(["* the paste was put away; nothing was sent"])
        case .control("z"):
            reaction.suspend = true
        case .control("l"):
            reaction.output += screen.clear()
        default:
            reaction.output += "\u{07}"
        }
        reaction.output += drawLine()
    }

    /// A key at the hidden prompt: editing works, nothing is shown, Enter hands the text over,
    /// and Ctrl-C, Escape or Enter on nothing give up (Ctrl-C does not quit here).
    private mutating func handleSecret(_ key: TerminalKey, at: WallTime, into reaction: inout Reaction) {
        var answer: ConsoleInput?
        switch key {
        case .control("c"), .escape:
            answer = .secretCancelled
        default:
            switch editor.handle(key, at: at) {
            case .submit(let text): answer = .secret(text)
            case .markOffered: answer = .secretCancelled
            case .quit: answer = .secretCancelled
            case .suspend: reaction.suspend = true
            case .redraw: reaction.output += screen.clear()
            case .none, .bell, .markHotKey, .complete, .pause, .resume, .overflow, .pasteTooLong, .full: break
            }
        }
        if let answer {
            reaction.inputs.append(answer)
            endSecret()
            reaction.output += redrawFooter()
        }
        reaction.output += drawLine()
    }

    /// `words` laid out in columns as wide as the widest word and two spaces, as many as fit in
    /// `width`, filled down then across as `ls` does: never a word cut at the edge.
    static func columns(_ words: [String], width: Int) -> [String] {
        let shown = words.map(TerminalText.escaped)
        let cell = (shown.map(DisplayWidth.of).max() ?? 0) + 2
        let perRow = max(1, width / max(cell, 1))
        let rows = (shown.count + perRow - 1) / perRow
        return (0..<rows).map { row in
            stride(from: row, to: shown.count, by: rows).map { index in
                let word = shown[index]
                return index + rows < shown.count ? word + String(repeating: " ", count: cell - DisplayWidth.of(word)) : word
            }.joined()
        }
    }

}
