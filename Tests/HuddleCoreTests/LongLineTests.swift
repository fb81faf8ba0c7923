import Testing

@testable import HuddleCore

@Suite(.offThePool) struct MessageBudgetTests {
    @Test(arguments: [
        ("what a catch", 0), ("/msg bob hi", 9), ("  /MSG  bob   hi", 14), ("/msg bob", 8), ("/msg", 0),
        ("/msgs bob hi", 0), ("/event kickoff", 0), ("/ms bob", 0),
    ])
    func theCommandBeforeADirectMessageIsNotTheMessage(line: String, prefix: Int) {
        #expect(MessageBudget.commandPrefixBytes(Array(line)) == prefix)
    }

    @Test func theCountShowsFromThreeQuartersOfTheLimit() {
        #expect(MessageBudget.counter(forMessageBytes: 3_071) == nil)
        #expect(MessageBudget.counter(forMessageBytes: 3_072) == "3,072/4,096")
        #expect(MessageBudget.counter(forMessageBytes: 4_096) == "4,096/4,096")
        #expect(MessageBudget.grouped(65_536) == "65,536" && MessageBudget.grouped(999) == "999")
        #expect(MessageBudget.grouped(1_000_000) == "1,000,000")
    }
}

@Suite(.offThePool) struct LongLineTests {
    @Test func aLineThatFitsIsSentAsItIs() {
        #expect(LongLine.plan("  what a catch  ") == .send(["what a catch"]))
        #expect(LongLine.plan("two\nlines") == .send(["two\u{2028}lines"]), "a pasted list stays a list")
        #expect(LongLine.plan("a\tb\r\nc") == .send(["a b\u{2028}c"]))
        #expect(LongLine.plan("   ") == .send([]))
    }

    @Test func aLongPasteIsCutAtLineEndsFirst() {
        let first = String(repeating: "a", count: 30) + " " + String(repeating: "b", count: 30)
        let second = String(repeating: "c", count: 50)
        let parts = LongLine.parts(of: first + "\n" + second, maxBytes: 80)
        #expect(parts == ["(1/2) " + first, "(2/2) " + second])
    }

    /// A line break is one byte on the console's line and three in a message (U+2028): parts are
    /// cut by what they will weigh.
    @Test func aListIsCutByWhatItWeighsWithItsLineBreaks() {
        let rows = (0..<50).map { String(format: "%02d ", $0) + String(repeating: "x", count: 77) }
        let paste = rows.joined(separator: "\n")
        #expect(paste.utf8.count <= MessageBudget.limit)
        guard case .send(let parts) = LongLine.plan(paste) else { Issue.record("refused"); return }
        #expect(parts.count == 2)
        #expect(parts.allSatisfy { $0.utf8.count <= MessageBudget.limit })
        let bodies = parts.map { String($0.dropFirst("(1/2) ".count)) }
        #expect(bodies.joined(separator: "\u{2028}").split(separator: "\u{2028}").map(String.init) == rows)
    }

    @Test func withoutLineEndsItIsCutBetweenWordsAndNothingIsLost() {
        let words = (0..<500).map { "word\($0)" }
        let parts = LongLine.parts(of: words.joined(separator: " "), maxBytes: 100)
        #expect(parts.allSatisfy { $0.utf8.count <= 100 })
        let count = parts.count
        let bodies = parts.enumerated().map { index, part in
            let number = "(\(index + 1)/\(count)) "
            #expect(part.hasPrefix(number))
            return String(part.dropFirst(number.count))
        }
        #expect(bodies.joined(separator: " ") == words.joined(separator: " "))
        #expect(count >= 10, "two-digit numbers were made room for")
    }

    @Test func oneUnbrokenWordIsCutBetweenCharactersNeverInsideOne() {
        let word = String(repeating: "🏈", count: 100)  // 400 bytes, no space
        let parts = LongLine.parts(of: word, maxBytes: 100)
        #expect(parts.allSatisfy { $0.utf8.count <= 100 })
        #expect(parts.map { $0.drop { $0 != " " }.dropFirst() }.joined() == word)
    }

    @Test func aDirectMessageIsCutIntoDirectMessagesToTheSameNick() {
        let text = String(repeating: "hi ", count: 3_000)
        guard case .send(let lines) = LongLine.plan("/msg bob " + text) else {
            Issue.record("refused")
            return
        }
        #expect(lines.count == 3)
        #expect(lines.allSatisfy { $0.hasPrefix("/msg bob (") })
        #expect(lines.allSatisfy { $0.utf8.count - "/msg bob ".utf8.count <= MessageBudget.limit })
    }

    @Test func anotherLongCommandIsRefusedWithTheReason() {
        #expect(LongLine.plan("/event " + String(repeating: "x", count: 5_000))
            == .refuse("a command line holds at most 4,096 bytes; this one would be 5,007"))
    }
}
