import Foundation
import Testing

@testable import HuddleCore
@testable import HuddleNode

/// Piped stdin as the node reads it, through a real pipe: the lines one read brings come
/// together (one turn, one commit for their chat), a line too long splits them, and what was
/// written later comes later.
@Suite struct StandardInputLinesTests {
    /// Everything the stream yields for what `write` puts in a pipe, once its write end closes.
    static func read(_ write: (Int32) -> Void) async -> [ConsoleInput] {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let stream = StandardInputLines.stream(fileDescriptor: ends[0])
        write(ends[1])
        close(ends[1])
        var inputs: [ConsoleInput] = []
        for await input in stream { inputs.append(input) }
        close(ends[0])
        return inputs.map { input in
            // The read's time is the machine's to use; the grouping is what is asserted here.
            if case .lines(let lines, _) = input { return .lines(lines, at: .epoch) }
            return input
        }
    }

    static func put(_ text: String, to fd: Int32) {
        let bytes = Array(text.utf8)
        #expect(bytes.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) } == bytes.count)
    }

    @Test func linesOneWriteBringsComeAsOne() async {
        let inputs = await Self.read { Self.put("first\nsecond\n/join nfl\nthird\n", to: $0) }
        #expect(inputs == [.lines(["first", "second", "/join nfl", "third"], at: .epoch)])
    }

    @Test func aLineTooLongSplitsThemAndIsSaid() async {
        let long = String(repeating: "x", count: StandardInputLines.maximumLineBytes + 10)
        let inputs = await Self.read { Self.put("before\n\(long)\nafter\n", to: $0) }
        let lines = inputs.compactMap { if case .lines(let lines, _) = $0 { lines } else { nil } }.flatMap { $0 }
        #expect(lines == ["before", "after"])
        #expect(inputs.contains(.tooLong(bytes: long.utf8.count)))
        let order = inputs.map { if case .tooLong = $0 { "long" } else { "lines" } }
        #expect(order.firstIndex(of: "long")! > 0 && order.last == "lines", "\(order)")
    }

    @Test func aLastLineWithoutANewlineStillComes() async {
        let inputs = await Self.read { Self.put("one\ntwo", to: $0) }
        let lines = inputs.flatMap { input -> [String] in
            switch input {
            case .lines(let lines, _): lines
            case .line(let line, _): [line]
            default: []
            }
        }
        #expect(lines == ["one", "two"])
    }
}

/// Which piped lines go to the machine together as chat: by the parser's rule, a line whose
/// first character past blanks is `/` is a command and goes alone, in its place (an indented
/// `/private` once sent the passphrase after it as a message).
@Suite struct PipedChatTests {
    @Test(arguments: [
        ("hello", true), ("  spaced out  ", true), ("a // b", true),
        ("/quit", false), ("  /private vip", false), ("\t/join nfl", false), ("", false), ("   ", false),
        (String(repeating: "x", count: MessageBudget.limit + 1), false),
    ])
    func aLineIsChatOnlyWhenTheParserWouldSayItIs(line: String, chat: Bool) {
        #expect(Node.isChat(line) == chat)
    }
}
