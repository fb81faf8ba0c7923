import Testing

import HuddleCore

@testable import HuddleNode

/// The hidden prompt `/private ROOM` puts up: what is typed there never reaches the screen or
/// the history, and the line that was being typed comes back.
@Suite struct ConsoleSecretTests {
    @Test func aPassphraseIsNeverShownNorKeptAndTheLineBeingTypedComesBack() {
        var typist = Typist()
        typist.type("half a th")
        typist.terminal.feed(typist.session.askSecret("passphrase for superbowl"))
        #expect(typist.inputRow == "passphrase for superbowl (hidden):")
        typist.type("touch")
        typist.arrive("~11:17:00 bob: hello alice")
        typist.type("down\u{7f}n")
        #expect(!typist.terminal.visible.joined().contains("touch"))
        #expect(typist.inputRow == "passphrase for superbowl (hidden):")

        var reaction = typist.session.handle([.enter], at: typist.clock)
        typist.terminal.feed(reaction.output)
        #expect(reaction.inputs == [.secret("touchdown")])
        #expect(reaction.submitted.isEmpty)
        #expect(typist.inputRow == "superbowl> half a th")

        // Up brings back earlier lines, never the passphrase.
        typist.type("ought\r")
        reaction = typist.session.handle([.up], at: typist.clock)
        typist.terminal.feed(reaction.output)
        #expect(typist.inputRow == "superbowl> half a thought")
        #expect(!typist.terminal.visible.joined().contains("touchdown"))
    }

    @Test(arguments: [TerminalKey.control("c"), .escape, .enter])
    func ctrlCEscapeOrAnEmptyEnterGiveUpWithoutQuitting(key: TerminalKey) {
        var typist = Typist()
        typist.terminal.feed(typist.session.askSecret("passphrase for superbowl"))
        if key != .enter { typist.type("abc") }
        let reaction = typist.session.handle([key], at: typist.clock + .milliseconds(100))
        typist.terminal.feed(reaction.output)
        #expect(reaction.inputs == [.secretCancelled])
        #expect(!reaction.quit)
        #expect(typist.inputRow == "superbowl>")
    }

    @Test func aPromptAnsweredOnAPageComesDownAndTheLineBeingTypedComesBack() {
        var typist = Typist()
        typist.type("half a th")
        typist.terminal.feed(typist.session.askSecret("passphrase for superbowl"))
        typist.type("touc")
        typist.terminal.feed(typist.session.withdrawSecret())
        #expect(typist.inputRow == "superbowl> half a th")
        #expect(!typist.terminal.visible.joined().contains("touc"))
        // Enter now sends the line, not a passphrase.
        let reaction = typist.session.handle([.enter], at: typist.clock)
        #expect(reaction.inputs.allSatisfy { if case .secret = $0 { false } else { true } })
        // With no prompt up, withdrawing it does nothing.
        #expect(typist.session.withdrawSecret().isEmpty)
    }
}
