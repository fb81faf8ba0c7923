import HuddleCore
import Testing

@testable import HuddleNode

/// One length limit a person can see: the status row counts a long line's bytes, and a paste
/// longer than one message is offered as numbered messages or refused with a reason, never dropped.
@Suite struct ConsoleLongLineTests {
    /// A bracketed paste, as a terminal sends it.
    func pasted(_ text: String) -> String { "\u{1b}[200~" + text + "\u{1b}[201~" }

    /// `count` words of five letters and a space: a paste with places to cut.
    func words(_ count: Int) -> String {
        (0..<count).map { "w\(10_000 + $0)" }.joined(separator: " ")
    }

    @Test func aLongLineShowsHowMuchOfAMessageItUses() {
        var typist = Typist(columns: 80)
        typist.type(String(repeating: "a", count: 3_000))
        #expect(typist.statusRow == " status", "far from the limit: no count")
        typist.type(String(repeating: "b", count: 900))
        #expect(typist.statusRow == " status · 3,900/4,096")
        typist.type("\u{7f}")  // Backspace
        #expect(typist.statusRow == " status · 3,899/4,096")
        typist.type("\u{15}")  // Ctrl-U
        #expect(typist.statusRow == " status")
    }

    @Test func theCountIsNeverCutOffANarrowStatusRow() {
        var typist = Typist(columns: 30)
        typist.tell(status: "superbowl · 3 peers · you: 2.0 s behind alice")
        typist.type(String(repeating: "a", count: 4_000))
        #expect(typist.statusRow.hasSuffix("· 4,000/4,096"))
        #expect(typist.statusRow.count <= 29)
    }

    @Test func typingPastTheLimitSaysWhyOnce() {
        var typist = Typist(columns: 80)
        typist.type(String(repeating: "a", count: 4_096))
        typist.type("b")
        typist.type("c")
        let told = typist.terminal.transcript.filter { $0.contains("one message holds 4,096 bytes") }
        #expect(told.count == 1)
        #expect(typist.statusRow.hasSuffix("4,096/4,096"))
        #expect(typist.inputs.isEmpty)
    }

    @Test func aPasteLongerThanAMessageIsOfferedAsNumberedMessagesAndEnterSendsThem() {
        var typist = Typist(columns: 100)
        typist.type("look: ")
        let paste = words(1_700)  // 11,899 bytes
        typist.type(pasted(paste))
        #expect(typist.inputs.isEmpty, "nothing goes before Enter")
        #expect(typist.terminal.transcript.contains { $0.contains("Enter sends it as 3 messages") })
        #expect(typist.inputRow == "send it as 3 messages? Enter = yes, Esc = no")
        typist.type("x")  // any other key rings and changes nothing
        #expect(typist.inputs.isEmpty)
        typist.type("\r")
        let sent = typist.inputs.compactMap { input -> String? in
            if case .line(let line, _) = input { line } else { nil }
        }
        #expect(sent.count == 3)
        #expect(sent.map { String($0.prefix(6)) } == ["(1/3) ", "(2/3) ", "(3/3) "])
        #expect(sent.allSatisfy { $0.utf8.count <= MessageBudget.limit })
        // Nothing lost, nothing added but the numbers: cut between words.
        let rejoined = sent.map { String($0.dropFirst(6)) }.joined(separator: " ")
        #expect(rejoined == "look: " + paste)
        #expect(typist.inputRow == "superbowl>", "the line went with the paste")
    }

    @Test func anEnterRightAfterThePartsWentIsADoublePressNotAMark() {
        var typist = Typist(columns: 100, offer: "kickoff")
        typist.type(pasted(words(1_000)))
        typist.type("\r")
        typist.type("\r", after: .milliseconds(150))
        #expect(typist.inputs.count == 2)
        #expect(!typist.inputs.contains { if case .markOffered = $0 { true } else { false } })
        typist.type("\r", after: .seconds(2))
        #expect(typist.inputs.last == .markOffered(label: "kickoff", at: typist.clock), "later, Enter marks again")
    }

    @Test func escapePutsTheOfferedPasteAwayAndTheLineIsAsItWas() {
        var typist = Typist(columns: 100)
        typist.type("half typed")
        typist.type(pasted(words(1_000)))
        #expect(typist.inputRow.hasPrefix("send it as 2 messages?"))
        typist.type("\u{1b}")
        typist.terminal.feed(typist.session.handle(typist.decoder.flush(), at: typist.clock).output)
        #expect(typist.inputs.isEmpty)
        #expect(typist.inputRow == "superbowl> half typed")
        #expect(typist.terminal.transcript.contains { $0.contains("the paste was put away; nothing was sent") })
    }

    @Test func aLongPasteAfterMsgGoesAsDirectMessagesToTheSameNick() {
        var typist = Typist(columns: 100)
        typist.type("/msg bob ")
        typist.type(pasted(words(1_000)))
        typist.type("\r")
        let sent = typist.inputs.compactMap { input -> String? in
            if case .line(let line, _) = input { line } else { nil }
        }
        #expect(sent.count == 2)
        #expect(sent.allSatisfy { $0.hasPrefix("/msg bob (") })
    }

    @Test func aLongPasteIntoAnotherCommandIsRefusedWithTheReason() {
        var typist = Typist(columns: 100)
        typist.type("/event ")
        typist.type(pasted(String(repeating: "x", count: 5_000)))
        #expect(typist.inputs.isEmpty)
        #expect(typist.terminal.transcript.contains {
            $0.contains("a command line holds at most 4,096 bytes; this one would be 5,007: nothing was pasted")
        })
        #expect(typist.inputRow == "superbowl> /event")
    }

    @Test func aPasteBeyondWhatTheConsoleTakesIsRefusedWithTheReason() {
        var typist = Typist(columns: 100)
        typist.type(pasted(String(repeating: "x", count: 70_000)))
        #expect(typist.inputs.isEmpty)
        #expect(typist.terminal.transcript.contains {
            $0.contains("that paste was 70,000 bytes; the console takes at most 65,536 at once: nothing was pasted")
        })
    }

    @Test func movingAcrossALongLineKeepsTheCursorOnScreen() {
        var typist = Typist(columns: 40)
        let line = words(600)
        typist.type(pasted(String(line.prefix(4_000))))
        #expect(typist.inputRow.hasSuffix(String(line.prefix(4_000).suffix(10))))
        typist.type("\u{01}")  // Ctrl-A
        #expect(typist.inputRow.hasPrefix("superbowl> w10000 w10001"))
        #expect(typist.terminal.column == "superbowl> ".count)
        typist.type("\u{05}")  // Ctrl-E
        #expect(typist.inputRow.hasSuffix(String(line.prefix(4_000).suffix(10))))
        #expect(typist.terminal.column == typist.inputRow.count)
    }
}
