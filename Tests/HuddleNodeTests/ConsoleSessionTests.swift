import HuddleCore
import Testing

@testable import HuddleNode

/// The interactive console end to end without a terminal: bytes typed in, through the key
/// decoder, the line editor and the screen layout, into an emulated terminal whose screen the
/// tests read as a user would.
struct Typist {
    var session: ConsoleSession
    var decoder = KeyDecoder()
    var terminal: VirtualTerminal
    var inputs: [ConsoleInput] = []
    var clock = WallTime.milliseconds(sinceEpoch: 1_700_000_000_000)

    init(columns: Int = 60, rows: Int = 8, room: String? = "superbowl", offer: String? = nil) {
        session = ConsoleSession(columns: columns, colors: false)
        terminal = VirtualTerminal(columns: columns, rows: rows)
        terminal.feed("$ huddle run --name alice\r\n")
        tell(room: room, offer: offer)
        terminal.feed(session.begin())
    }

    /// Bytes as a terminal sends them, `after` the previous ones.
    mutating func type(_ bytes: String, after: TimeSpan = .seconds(1)) {
        clock += after
        let reaction = session.handle(decoder.feed(Array(bytes.utf8)), at: clock)
        terminal.feed(reaction.output)
        inputs += reaction.inputs
    }

    /// A line from the node (a peer's message), printed above the prompt.
    mutating func arrive(_ line: String) {
        terminal.feed(session.print(line))
    }

    mutating func tell(room: String? = "superbowl", offer: String? = nil, more: Int = 0, status: String = "status",
                       words: ConsoleCompletion.Words = .init()) {
        let context = ConsoleContext(
            status: status, room: room, offer: offer.map { .init(label: CalibrationLabel($0)!, more: more) },
            words: words)
        terminal.feed(session.update(context))
    }

    /// The row the cursor is on: the input line.
    var inputRow: String { terminal.lines[terminal.row] }
    var statusRow: String { terminal.lines[terminal.row - 1] }
}

@Suite struct ConsoleSessionTests {
    @Test func incomingLinesGoAboveAndTheLineBeingTypedStaysIntact() {
        var typist = Typist()
        typist.type("what a cat")
        typist.arrive("~11:17:00 bob: hello alice")
        #expect(typist.terminal.visible == [
            "$ huddle run --name alice",
            "~11:17:00 bob: hello alice",
            " status",
            "superbowl> what a cat",
        ])
        #expect(typist.terminal.column == "superbowl> what a cat".count)
        typist.type("ch\r")
        #expect(typist.inputs == [.line("what a catch", at: typist.clock)])
        #expect(typist.inputRow == "superbowl>")
    }

    @Test func aLineArrivingMidWordKeepsTheCursorWhereItWas() {
        var typist = Typist()
        typist.type("hello world")
        typist.type("\u{1b}[D\u{1b}[D\u{1b}[D\u{1b}[D\u{1b}[D")  // five Lefts: before "world"
        typist.arrive("* bob joined superbowl")
        typist.type("big ")
        #expect(typist.inputRow == "superbowl> hello big world")
        #expect(typist.terminal.column == "superbowl> hello big ".count)
    }

    @Test func aFloodOfLinesScrollsAboveAFooterThatStaysAtTheBottom() {
        var typist = Typist(rows: 6)
        typist.type("half typed")
        for n in 1...20 { typist.arrive("line \(n)") }
        let lines = typist.terminal.lines
        #expect(lines[2...] == ["line 19", "line 20", " status", "superbowl> half typed"])
        #expect(typist.terminal.transcript.filter { $0.hasPrefix("line ") }.count == 20)
        #expect(typist.terminal.row == 5)
    }

    @Test func multiLineOutputKeepsTheFooterTogether() {
        var typist = Typist()
        typist.arrive("in superbowl:\n  alice (you): calibrated\n  bob: 2.0 s behind you")
        #expect(typist.terminal.visible.suffix(5) == [
            "in superbowl:", "  alice (you): calibrated", "  bob: 2.0 s behind you", " status", "superbowl>",
        ])
    }

    @Test func wideCharactersKeepTheCursorRight() {
        var typist = Typist()
        typist.type("🏈 日本")
        typist.type("\u{1b}[D\u{1b}[Dx")
        #expect(typist.inputRow == "superbowl> 🏈 x日本")
        // "superbowl> " 11, the football 2, a space 1, x 1.
        #expect(typist.terminal.column == 15)
        typist.type("\u{7f}\u{7f}")  // Backspace twice: x, then the space
        #expect(typist.inputRow == "superbowl> 🏈日本")
        #expect(typist.terminal.column == 13)
    }

    @Test func aLongLineScrollsSidewaysWithTheCursor() {
        var typist = Typist(columns: 30)
        let long = (0..<60).map { String($0 % 10) }.joined()
        typist.type(long)
        #expect(typist.inputRow.hasPrefix("superbowl> "))
        #expect(typist.inputRow.hasSuffix("56789"))
        #expect(typist.inputRow.count <= 29)
        #expect(typist.terminal.column <= 29)
        typist.type("\u{01}")  // Ctrl-A
        #expect(typist.inputRow == "superbowl> " + String(long.prefix(18)))
        #expect(typist.terminal.column == 11)
        typist.type("\r")
        #expect(typist.inputs == [.line(long, at: typist.clock)])
    }

    @Test func thePromptOffersTheMomentAndEnterOnAnEmptyLineMarksIt() {
        var typist = Typist()
        typist.tell(offer: "kickoff", more: 1)
        #expect(typist.inputRow == "superbowl [Enter = kickoff +1 more]>")
        // Where the prompt would crowd out the line, the room goes first.
        var narrow = Typist(columns: 40, offer: "kickoff")
        narrow.type("hi")
        #expect(narrow.inputRow == "[Enter = kickoff]> hi")
        typist.type("\r")
        #expect(typist.inputs == [.markOffered(label: "kickoff", at: typist.clock)])
    }

    @Test func enterRightAfterSendingIsADoublePressNotAMark() {
        var typist = Typist(offer: "kickoff")
        typist.type("go team\r")
        typist.type("\r", after: .milliseconds(100))
        #expect(typist.inputs == [.line("go team", at: typist.clock - .milliseconds(100))])
        typist.type("\r", after: .seconds(1))
        #expect(typist.inputs.last == .markOffered(label: "kickoff", at: typist.clock))
    }

    @Test func enterOnAnEmptyLineWithNothingOfferedDoesNothing() {
        var typist = Typist()
        typist.type("\r")
        #expect(typist.inputs.isEmpty)
    }

    @Test func theHotKeyMarksWhileALineIsBeingTyped() {
        var typist = Typist(offer: "kickoff")
        typist.type("what a ")
        typist.type("\u{14}")  // Ctrl-T
        #expect(typist.inputs == [.markOffered(label: "kickoff", at: typist.clock)])
        #expect(typist.inputRow == "superbowl [Enter = kickoff]> what a")
        typist.type("run\r")
        #expect(typist.inputs.last == .line("what a run", at: typist.clock))
    }

    @Test func tabCompletesAndListsTheChoices() {
        var typist = Typist()
        typist.tell(words: .init(rooms: ["superbowl"], nicks: ["bob", "bella"], labels: ["kickoff"]))
        typist.type("/jo\t")
        #expect(typist.inputRow == "superbowl> /join")
        typist.type("s\t")
        #expect(typist.inputRow == "superbowl> /join superbowl")
        typist.type("\u{15}b\t")  // Ctrl-U, then "b" and Tab: two nicks, nothing to add yet
        #expect(!typist.terminal.visible.contains("bella  bob"), "the first Tab only rings")
        typist.type("\t")  // the second lists them, once
        #expect(typist.statusRow == " status")
        #expect(typist.terminal.visible.contains("bella  bob"))
        #expect(typist.inputRow == "superbowl> b")
        typist.type("\t")
        #expect(typist.terminal.visible.filter { $0 == "bella  bob" }.count == 1, "listed once")
        typist.type("o\t")
        #expect(typist.inputRow == "superbowl> bob:")
    }

    @Test func nicksCompleteAfterMsgAndInItsText() {
        var typist = Typist()
        typist.tell(words: .init(rooms: [], nicks: ["carol", "alice"], labels: []))
        typist.type("/msg ca\t")
        #expect(typist.inputRow == "superbowl> /msg carol")
        typist.type("hi al\t")
        #expect(typist.inputRow == "superbowl> /msg carol hi alice")
    }

    @Test func choicesAreListedInColumnsOfWholeWords() {
        let words = ["/join", "/private", "/msg", "/score", "/teams", "/pause", "/resume", "/status"]
        let rows = ConsoleSession.columns(words, width: 30)
        #expect(rows == ["/join     /score    /resume", "/private  /teams    /status", "/msg      /pause"])
        #expect(rows.allSatisfy { $0.count <= 30 })
        #expect(ConsoleSession.columns(["a-very-long-word-indeed"], width: 10) == ["a-very-long-word-indeed"])
    }

    @Test func aPasteIsOneLineNeverAnEnter() {
        var typist = Typist(offer: "kickoff")
        typist.type("\u{1b}[200~first line\nsecond line\n\u{1b}[201~")
        #expect(typist.inputs.isEmpty)
        // Its line breaks are kept, drawn as ↵: a pasted list is sent as one message of lines.
        #expect(typist.inputRow == "superbowl [Enter = kickoff]> first line↵second line↵")
    }

    @Test func historyComesBackWithUpAndTheDraftWithDown() {
        var typist = Typist()
        typist.type("one\r")
        typist.type("two\r")
        typist.type("dra")
        typist.type("\u{1b}[A")
        #expect(typist.inputRow == "superbowl> two")
        typist.type("\u{1b}[A")
        #expect(typist.inputRow == "superbowl> one")
        typist.type("\u{1b}[B\u{1b}[B")
        #expect(typist.inputRow == "superbowl> dra")
    }

    @Test func ctrlCAndCtrlDOnAnEmptyLineQuit() {
        var typist = Typist()
        typist.type("\u{03}")
        #expect(typist.inputs == [.quit])
        var other = Typist()
        other.type("x\u{04}")  // Ctrl-D deletes on a non-empty line (nothing under the cursor)
        #expect(other.inputs.isEmpty)
        other.type("\u{15}\u{04}")
        #expect(other.inputs == [.quit])
    }

    @Test func ctrlCOnAHalfTypedLineClearsItAndASecondQuits() {
        var typist = Typist()
        typist.type("what a ca\u{03}")
        #expect(typist.inputs.isEmpty)
        #expect(typist.inputRow == "superbowl>")
        typist.type("\u{19}")  // Ctrl-Y: the line comes back
        #expect(typist.inputRow == "superbowl> what a ca")
        typist.type("\u{03}\u{03}")
        #expect(typist.inputs == [.quit])
    }

    @Test func ctrlDDeletesTheCharacterUnderTheCursor() {
        var typist = Typist()
        typist.type("abc\u{01}\u{04}")  // Ctrl-A, Ctrl-D
        #expect(typist.inputRow == "superbowl> bc")
        #expect(typist.inputs.isEmpty)
    }

    @Test func endingLeavesTheConversationAndAnEmptyLine() {
        var typist = Typist()
        typist.arrive("bob: bye")
        typist.type("unsent")
        typist.terminal.feed(typist.session.end())
        #expect(typist.terminal.visible == ["$ huddle run --name alice", "bob: bye"])
        #expect(typist.terminal.column == 0)
        #expect(typist.terminal.row == 2)
    }

    @Test func aNarrowerTerminalRedrawsAFooterThatFitsAndLeavesNoPieceBehind() {
        var typist = Typist(columns: 80, rows: 10)
        typist.arrive("bob: before the resize")
        typist.tell(offer: "kickoff", status: "superbowl · 2 peers · you: 3.0 s behind alice · 2 waiting, next in 4 s")
        typist.type("a line typed before the terminal got narrower")
        // The terminal reflows the old footer onto more rows, then the console redraws.
        typist.terminal.narrow(to: 30)
        typist.terminal.feed(typist.session.resize(columns: 30))
        typist.arrive("bob: after")
        // Nothing of the old, wider footer is left; the new one fits (the room made way for the offer).
        #expect(typist.terminal.visible == [
            "$ huddle run --name alice", "bob: before the resize", "bob: after", " superbowl · 2 peers · you: …",
            "[Enter = kickoff]>  narrower",
        ])
        #expect(typist.terminal.column == 28)
    }

    @Test func textFromPeersCannotDriveTheTerminal() {
        var typist = Typist()
        typist.tell(room: "superbowl", offer: nil, status: "bob\u{1b}[2J")
        #expect(typist.statusRow == " bob\\x1B[2J")
    }
}
