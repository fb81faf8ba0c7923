import Testing

@testable import HuddleCore

@Suite(.offThePool) struct ConsoleCommandTests {
    @Test(arguments: [
        ("hello there", ConsoleCommand.say("hello there")),
        ("  spaced out  ", .say("spaced out")),
        ("a list:\n- milk\r\n- eggs\n", .say("a list:\u{2028}- milk\u{2028}- eggs")),  // a paste: lines kept
        ("/msg bob two\nlines", .direct(to: "bob", text: "two\u{2028}lines")),
        ("/event first\ndown", .event(label: "first down")),  // a command's words are one line
        ("/join superbowl", .join(room: "superbowl")),
        ("/JOIN  superbowl ", .join(room: "superbowl")),
        ("/leave", .leave),
        ("/rooms", .rooms),
        ("/who", .who),
        ("/event first pitch", .event(label: "first pitch")),
        ("/now kickoff", .now(label: "kickoff")),
        ("/now", .now(label: nil)),
        ("/now   ", .now(label: nil)),
        ("/ignore halftime", .ignore(label: "halftime")),
        ("/delay +1", .delay(.seconds(1))),
        ("/delay -0.5", .delay(.milliseconds(-500))),
        ("/delay +2.25", .delay(.milliseconds(2_250))),
        ("/delay 2", .delay(.seconds(2))),  // as a person types it: later
        ("/history", .history(count: ConsoleCommand.defaultHistoryCount)),
        ("/history 5", .history(count: 5)),
        ("/help", .help(all: false)),
        ("/help all", .help(all: true)),
        ("/quit", .quit),
        ("/exit", .quit),
        ("/doctor", .doctor),
    ])
    func parses(line: String, expected: ConsoleCommand) throws {
        #expect(try ConsoleCommand(parsing: line) == expected)
    }

    @Test(arguments: [
        ("", "nothing to send"),
        ("   ", "nothing to send"),
        ("/dance", "unknown command \"/dance\" (try /help)"),
        ("/join", "/join needs a room name"),
        ("/ignore", "/ignore needs a label"),
        ("/leave now", "/leave takes no argument"),
        ("/delay +abc", "/delay: \"+abc\" is not S, +S or -S seconds, e.g. 1, +1 or -0.5"),
        ("/delay +0", "/delay: \"+0\" is not S, +S or -S seconds, e.g. 1, +1 or -0.5"),
        ("/delay +nan", "/delay: \"+nan\" is not S, +S or -S seconds, e.g. 1, +1 or -0.5"),
        ("/delay +1e3", "/delay: \"+1e3\" is not S, +S or -S seconds, e.g. 1, +1 or -0.5"),
        ("/delay -9999", "/delay: \"-9999\" is not at most 600 seconds either way"),
        ("/history 0", "/history: \"0\" is not a positive count"),
        ("/history lots", "/history: \"lots\" is not a positive count"),
    ])
    func rejectsWithAMessageForTheUser(line: String, message: String) {
        #expect {
            try ConsoleCommand(parsing: line)
        } throws: { error in
            (error as? ConsoleCommandError)?.description == message
        }
    }

    /// `/doctor` answers later than a control request's reply: from `huddle send` it is refused
    /// with the command that runs the same checks; the console and a page may ask.
    @Test func doctorRunsFromTheConsoleAndAPageButNotTheControlSocket() throws {
        #expect(NodeMachine.refusal(of: .doctor, from: .console) == nil)
        #expect(NodeMachine.refusal(of: .doctor, from: .page) == nil)
        #expect(NodeMachine.refusal(of: .doctor, from: .control) == .notFrom(.control, command: "/doctor"))
    }
}
