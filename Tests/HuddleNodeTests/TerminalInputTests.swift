import Foundation
import HuddleCore
import Testing

@testable import HuddleNode

@Suite struct KeyDecoderTests {
    func decode(_ chunks: [[UInt8]]) -> [TerminalKey] {
        var decoder = KeyDecoder()
        return chunks.flatMap { decoder.feed($0) }
    }

    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func textAndControlKeys() {
        #expect(decode([bytes("hi\r")]) == [.text("hi"), .enter])
        #expect(decode([[0x7f, 0x08, 0x09, 0x01, 0x14, 0x03, 0x00]])
            == [.backspace, .backspace, .tab, .control("a"), .control("t"), .control("c"), .control(" ")])
    }

    @Test func arrowsHomeEndAndDeleteInEveryDialect() {
        #expect(decode([bytes("\u{1b}[A\u{1b}[B\u{1b}[C\u{1b}[D")]) == [.up, .down, .right, .left])
        #expect(decode([bytes("\u{1b}OA\u{1b}OH\u{1b}OF")]) == [.up, .home, .end])
        #expect(decode([bytes("\u{1b}[H\u{1b}[F\u{1b}[1~\u{1b}[4~\u{1b}[7~\u{1b}[8~\u{1b}[3~")])
            == [.home, .end, .home, .end, .home, .end, .delete])
    }

    @Test func wordMovesWithCtrlOrAlt() {
        #expect(decode([bytes("\u{1b}[1;5C\u{1b}[1;5D\u{1b}[1;3D\u{1b}b\u{1b}f")])
            == [.wordRight, .wordLeft, .wordLeft, .wordLeft, .wordRight])
        #expect(decode([[0x1b, 0x7f]]) == [.altBackspace])
        #expect(decode([bytes("\u{1b}d")]) == [.alt("d")])
    }

    @Test func sequencesSplitAcrossReadsWaitForTheirRest() {
        let football = Array("🏈".utf8)
        #expect(decode([Array(football[..<2]), Array(football[2...])]) == [.text("🏈")])
        #expect(decode([[0x1b], bytes("["), bytes("D")]) == [.left])
        var decoder = KeyDecoder()
        #expect(decoder.feed([0x1b, UInt8(ascii: "[")]) == [])
        #expect(decoder.isWaiting)
    }

    @Test func aLoneEscapeIsKnownOnlyAfterSilence() {
        var decoder = KeyDecoder()
        #expect(decoder.feed([0x1b]) == [])
        #expect(decoder.flush() == [.escape])
        #expect(!decoder.isWaiting)
    }

    @Test func unknownSequencesAreSwallowedWhole() {
        #expect(decode([bytes("\u{1b}[15~a\u{1b}[5~b")]) == [.ignored, .text("a"), .ignored, .text("b")])
    }

    @Test func bracketedPasteIsOneKeyWithItsLineBreaksAsNewlines() {
        #expect(decode([bytes("\u{1b}[200~one\r\ntwo\tthree\rfour\u{1b}[201~x")])
            == [.paste("one\ntwo three\nfour"), .text("x")])
        // The end marker split across reads.
        #expect(decode([bytes("\u{1b}[200~abc\u{1b}[20"), bytes("1~")]) == [.paste("abc")])
        // Escape sequences inside a paste are text, not keys (and their ESC is dropped).
        #expect(decode([bytes("\u{1b}[200~a\u{1b}[Db\u{1b}[201~")]) == [.paste("a[Db")])
    }

    @Test func aPasteBeyondWhatTheConsoleTakesIsReportedNotCut() {
        let huge = String(repeating: "y", count: KeyDecoder.maximumPasteBytes + 10)
        var decoder = KeyDecoder()
        var keys: [TerminalKey] = []
        // As a terminal sends it: in reads of 4 KiB.
        let all = bytes("\u{1b}[200~" + huge + "\u{1b}[201~z")
        for start in stride(from: 0, to: all.count, by: 4096) {
            keys += decoder.feed(all[start..<min(all.count, start + 4096)])
        }
        #expect(keys == [.pasteTooLong(bytes: KeyDecoder.maximumPasteBytes + 10), .text("z")])
    }

    @Test func strayBytesAreDropped() {
        #expect(decode([[0x80, 0xff, UInt8(ascii: "a")]]) == [.text("a")])
    }
}

@Suite struct LineEditorTests {
    func typed(_ keys: [TerminalKey]) -> LineEditor {
        var editor = LineEditor()
        for key in keys { _ = editor.handle(key, at: .epoch) }
        return editor
    }

    @Test func killsAndYank() {
        var editor = typed([.text("one two three"), .control("w")])
        #expect(editor.text == "one two ")
        _ = editor.handle(.control("a"), at: .epoch)
        _ = editor.handle(.control("k"), at: .epoch)
        #expect(editor.text == "")
        _ = editor.handle(.control("y"), at: .epoch)
        #expect(editor.text == "one two ")
        _ = editor.handle(.control("u"), at: .epoch)
        #expect(editor.text == "" && editor.cursor == 0)
    }

    @Test func wordMovesStopAtPunctuation() {
        var editor = typed([.text("what a catch!"), .wordLeft])
        #expect(editor.cursor == 7)
        _ = editor.handle(.wordLeft, at: .epoch)
        #expect(editor.cursor == 5)
        _ = editor.handle(.wordRight, at: .epoch)
        #expect(editor.cursor == 6)
        _ = editor.handle(.alt("d"), at: .epoch)
        #expect(editor.text == "what a!")
        _ = editor.handle(.altBackspace, at: .epoch)
        #expect(editor.text == "what !")
    }

    @Test func combiningMarksAndEmojiAreOneStep() {
        var editor = typed([.text("cafe"), .text("\u{301}")])
        #expect(editor.text == "café" && editor.cursor == 4)
        _ = editor.handle(.backspace, at: .epoch)
        #expect(editor.text == "caf")
        editor = typed([.text("👍🏽👨‍👩‍👧"), .left])
        #expect(editor.cursor == 1)
        _ = editor.handle(.delete, at: .epoch)
        #expect(editor.text == "👍🏽")
    }

    @Test func controlCharactersNeverEnterTheLine() {
        let editor = typed([.paste("a\u{1b}b\u{7f}c")])
        #expect(editor.text == "abc")
    }

    @Test func theLineHoldsOneMessageAndTypingBeyondItIsRefused() {
        var editor = LineEditor()
        #expect(editor.handle(.paste(String(repeating: "x", count: MessageBudget.limit - 2)), at: .epoch) == .none)
        // Typing that does not fit goes in as far as it fits, and says the line is full.
        #expect(editor.handle(.text("yyy"), at: .epoch) == .full)
        #expect(editor.text.utf8.count == MessageBudget.limit)
        #expect(editor.text.hasSuffix("xyy"))
        #expect(editor.handle(.text("é"), at: .epoch) == .full)
        #expect(editor.byteCount == MessageBudget.limit)
    }

    @Test func aDirectMessagesNickIsNotCountedAgainstTheMessage() {
        var editor = LineEditor()
        _ = editor.handle(.text("/msg bob "), at: .epoch)
        #expect(editor.handle(.paste(String(repeating: "x", count: MessageBudget.limit)), at: .epoch) == .none)
        #expect(editor.messageBytes == MessageBudget.limit)
        #expect(editor.byteCount == MessageBudget.limit + "/msg bob ".utf8.count)
    }

    @Test func aPasteTooLongForTheLineIsHandedBackWhole() {
        var editor = LineEditor()
        _ = editor.handle(.text("look: "), at: .epoch)
        _ = editor.handle(.left, at: .epoch)
        let paste = String(repeating: "ab\n", count: 2_000)
        #expect(editor.handle(.paste(paste), at: .epoch) == .overflow("look:" + paste + " "))
        #expect(editor.text == "look: " && editor.cursor == 5, "the line is as it was")
    }

    @Test func theByteCountFollowsEveryEdit() {
        var editor = LineEditor()
        let keys: [TerminalKey] = [
            .text("héllo 🏈 wörld"), .left, .left, .backspace, .home, .delete, .text("日本"), .wordRight,
            .control("w"), .control("y"), .end, .altBackspace, .text("e"), .text("\u{301}"), .control("k"),
            .paste("x\ny"), .control("u"),
        ]
        for key in keys {
            _ = editor.handle(key, at: .epoch)
            #expect(editor.byteCount == editor.text.utf8.count, "after \(key)")
            #expect(editor.characters.count == editor.text.count, "after \(key)")
        }
    }

    @Test func keysThatAskTheConsole() {
        var editor = LineEditor()
        #expect(editor.handle(.tab, at: .epoch) == .complete)
        #expect(editor.handle(.control("t"), at: .epoch) == .markHotKey)
        #expect(editor.handle(.control("l"), at: .epoch) == .redraw)
        #expect(editor.handle(.control("z"), at: .epoch) == .suspend)
        #expect(editor.handle(.control("c"), at: .epoch) == .quit)
        #expect(editor.handle(.text("half"), at: .epoch) == .none)
        #expect(editor.handle(.control("c"), at: .epoch) == .none, "a half-typed line is cleared, not quit")
        #expect(editor.text == "")
        #expect(editor.handle(.escape, at: .epoch) == .bell)
        #expect(editor.handle(.enter, at: .epoch) == .markOffered)
        #expect(editor.handle(.text("  "), at: .epoch) == .none)
        #expect(editor.handle(.enter, at: .epoch + .seconds(1)) == .markOffered)
        #expect(editor.text == "")
    }
}

@Suite struct InputHistoryTests {
    @Test func boundedWithoutRepeatsOrBlanks() {
        var history = InputHistory(limit: 3)
        for line in ["a", "b", "b", "  ", "c", "d"] { history.add(line) }
        #expect(history.entries == ["b", "c", "d"])
    }

    @Test func browsingReturnsToTheDraft() {
        var history = InputHistory(entries: ["hello", "/who"])
        #expect(history.older(than: "dra") == "/who")
        #expect(history.older(than: "/who") == "hello")
        #expect(history.older(than: "hello") == nil)
        #expect(history.newer() == "/who")
        #expect(history.newer() == "dra")
        #expect(history.newer() == nil)
    }

    @Test func theFileKeepsHistoryAcrossRestartsBoundedAndPrivate() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("huddle-history-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = InputHistoryFile(directory: directory.path, limit: 5)
        #expect(file.load() == [])
        for n in 1...12 { file.append("line \(n)") }
        #expect(file.load() == (8...12).map { "line \($0)" })
        // Past twice the limit the file was rewritten with the newest entries only.
        let text = try String(contentsOfFile: file.path, encoding: .utf8)
        #expect(text == (8...12).map { "line \($0)\n" }.joined())
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }
}

@Suite struct DisplayWidthTests {
    @Test(arguments: [
        ("abc", 3), ("日本語", 6), ("한국", 4), ("🏈", 2), ("👍🏽", 2), ("👨‍👩‍👧", 2), ("❤️", 2), ("❤", 1),
        ("é", 1), ("e\u{301}", 1), ("ｆｕｌｌ", 8), ("\u{1b}", 0), ("1️⃣", 2), ("🇩🇪", 2),
    ])
    func columns(text: String, width: Int) {
        #expect(DisplayWidth.of(text) == width)
    }
}
