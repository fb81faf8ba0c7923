import Foundation
import Synchronization
import Testing

@testable import HuddleCore
@testable import HuddleNode

private func node(_ n: UInt8) -> NodeID {
    NodeID(bytes: [n] + [UInt8](repeating: 0, count: NodeID.byteCount - 1))!
}

private func event(_ origin: NodeID, _ seq: UInt64, _ body: EventBody, at createdAt: WallTime) -> Event {
    Event(
        id: EventID(origin: origin, seq: seq), room: "superbowl", createdAt: createdAt, context: VersionVector(),
        body: body, signature: [UInt8](repeating: 0, count: Event.signatureByteCount))
}

private let alice = Member(id: node(1), nick: "alice")
private let bob = Member(id: node(2), nick: "bob")
private let carol = Member(id: node(3), nick: "carol")
private let dave = Member(id: node(4), nick: "dave")

/// 2024-02-11 23:30:05 UTC, and as the JSON lines carry it.
private let kickoff = WallTime.milliseconds(sinceEpoch: kickoffMs)
private let kickoffMs: Int64 = 1_707_694_205_000

private func message(
    from: Member = bob, text: String = "what a catch", held: TimeSpan = .seconds(2), game: WallTime? = kickoff
) -> RoomOutput {
    .message(
        ShownMessage(
            event: event(from.id, 7, .chat(text: text), at: kickoff + .seconds(2)), from: from, text: text,
            shownAt: kickoff + .seconds(4), held: held, gameTime: game))
}

private let offsets = RoomOutput.offsetsChanged(
    OffsetReport(entries: [
        .init(member: alice, offset: .zero, behindReader: .zero),
        .init(member: bob, offset: .seconds(2), behindReader: .seconds(2)),
        .init(member: carol, offset: .milliseconds(-1_500), behindReader: .milliseconds(-1_500)),
        .init(member: dave, offset: nil, behindReader: nil),
    ], noticed: [alice.id, bob.id, carol.id, dave.id]))

private let json = JSONRenderer()
private let plain = HumanRenderer(colors: false, timeZone: TimeZone(identifier: "UTC")!)
private let colored = HumanRenderer(colors: true, timeZone: TimeZone(identifier: "UTC")!)

/// Parses a line that must be exactly one JSON object.
private func object(_ line: String?) throws -> [String: Any] {
    let line = try #require(line)
    #expect(!line.contains("\n"))
    #expect(!line.contains("\u{1B}"))
    let value = try JSONSerialization.jsonObject(with: Data(line.utf8))
    return try #require(value as? [String: Any])
}

@Suite struct JSONRendererTests {
    @Test func messageHasEveryKey() throws {
        let line = json.render(message(), room: "superbowl", reader: alice.id)
        #expect(line?.hasPrefix(#"{"type":"message","#) == true)
        let fields = try object(line)
        #expect(fields["type"] as? String == "message")
        #expect(fields["room"] as? String == "superbowl")
        #expect(fields["id"] as? String == bob.id.hex + "#7")
        #expect((fields["id"] as? String)?.count == 64 + 2)
        #expect(fields["from"] as? String == bob.id.hex)
        #expect(fields["nick"] as? String == "bob")
        #expect(fields["text"] as? String == "what a catch")
        #expect(fields["sent_at"] as? Int64 == kickoffMs + 2000)
        #expect(fields["shown_at"] as? Int64 == kickoffMs + 4000)
        #expect(fields["held_ms"] as? Int64 == 2000)
        #expect(fields["game_ms"] as? Int64 == kickoffMs)
    }

    @Test func uncalibratedMessageHasNullGameTime() throws {
        let fields = try object(json.render(message(held: .zero, game: nil), room: "superbowl", reader: alice.id))
        #expect(fields.keys.contains("game_ms"))
        #expect(fields["game_ms"] is NSNull)
        #expect(fields["held_ms"] as? Int64 == 0)
    }

    @Test func calibrationAndMark() throws {
        let prompt = try object(
            json.render(.calibrationEvent(label: "kickoff", by: bob), room: "superbowl", reader: alice.id))
        #expect(prompt["type"] as? String == "calibration")
        #expect(prompt["room"] as? String == "superbowl")
        #expect(prompt["label"] as? String == "kickoff")
        #expect(prompt["by"] as? String == "bob")

        let mark = try object(
            json.render(.mark(label: "kickoff", by: bob, at: kickoff), room: "superbowl", reader: alice.id))
        #expect(mark["type"] as? String == "mark")
        #expect(mark["label"] as? String == "kickoff")
        #expect(mark["nick"] as? String == "bob")
        #expect(mark["at"] as? Int64 == kickoffMs)
    }

    @Test(arguments: [("join", RoomOutput.joined(bob)), ("leave", RoomOutput.left(bob))])
    func joinAndLeave(type: String, output: RoomOutput) throws {
        let fields = try object(json.render(output, room: "superbowl", reader: alice.id))
        #expect(fields["type"] as? String == type)
        #expect(fields["room"] as? String == "superbowl")
        #expect(fields["nick"] as? String == "bob")
        #expect(fields["id"] as? String == bob.id.hex)
    }

    @Test func offsetsByNickWithNullForUncalibrated() throws {
        let fields = try object(json.render(offsets, room: "superbowl", reader: alice.id))
        #expect(fields["type"] as? String == "offsets")
        let map = try #require(fields["offsets"] as? [String: Any])
        #expect(map["alice"] as? Int64 == 0)
        #expect(map["bob"] as? Int64 == 2000)
        #expect(map["carol"] as? Int64 == -1500)
        #expect(map["dave"] is NSNull)
        #expect(map.count == 4)
    }

    /// A member people see under another name than its nick says it beside the nick (the page
    /// shows it, as the console does); one that goes by its nick alone has no such key.
    @Test func aSharedNickCarriesTheNameItShowsUnder() throws {
        let twin = Member(id: node(9), nick: "bob", sharesNick: true)
        let shown = try object(json.render(message(from: twin), room: "r", reader: alice.id))
        #expect(shown["nick"] as? String == "bob")
        #expect(shown["display_name"] as? String == "bob#\(twin.id.hex.prefix(8))")
        let joined = try object(json.render(.joined(twin), room: "r", reader: alice.id))
        #expect(joined["display_name"] as? String == "bob#\(twin.id.hex.prefix(8))")
        #expect(try object(json.render(message(), room: "r", reader: alice.id))["display_name"] == nil)
        #expect(try object(json.render(.joined(bob), room: "r", reader: alice.id))["display_name"] == nil)
    }

    @Test func sharedNicksDoNotCollide() throws {
        let twin = Member(id: node(9), nick: "bob")
        let report = RoomOutput.offsetsChanged(
            OffsetReport(entries: [
                .init(member: bob, offset: .zero, behindReader: nil), .init(member: twin, offset: .milliseconds(5), behindReader: nil),
            ]))
        let fields = try object(json.render(report, room: "r", reader: alice.id))
        let map = try #require(fields["offsets"] as? [String: Any])
        #expect(map.count == 2)
        #expect(map["bob#\(bob.id)"] as? Int64 == 0)
        #expect(map["bob#\(twin.id)"] as? Int64 == 5)
    }

    @Test func nodeLines() throws {
        let ready = try object(json.ready(id: alice.id, nick: "alice", port: 7700, dataDir: "/tmp/a"))
        #expect(ready["type"] as? String == "ready")
        #expect(ready["id"] as? String == alice.id.hex)
        #expect(ready["nick"] as? String == "alice")
        #expect(ready["port"] as? Int == 7700)
        #expect(ready["data_dir"] as? String == "/tmp/a")

        let error = try object(json.error("you are not in a room"))
        #expect(error["type"] as? String == "error")
        #expect(error["message"] as? String == "you are not in a room")

        let info = try object(json.info("in superbowl:\n  alice (you)"))
        #expect(info["type"] as? String == "info")
        #expect(info["message"] as? String == "in superbowl:\n  alice (you)")

        let peer = try object(json.peer(id: bob.id, nick: "bob", state: .suspect))
        #expect(peer["type"] as? String == "peer")
        #expect(peer["id"] as? String == bob.id.hex)
        #expect(peer["nick"] as? String == "bob")
        #expect(peer["state"] as? String == "suspect")
    }

    @Test func typeComesFirst() {
        let lines = [
            json.render(message(), room: "r", reader: alice.id)!, json.render(offsets, room: "r", reader: alice.id)!,
            json.ready(id: alice.id, nick: "a", port: 1, dataDir: "/"), json.error("x"), json.info("y"),
            json.peer(id: bob.id, nick: "b", state: .alive),
        ]
        for line in lines { #expect(line.hasPrefix(#"{"type":""#)) }
    }

    @Test func stringsAreEscapedAndRoundTrip() throws {
        let nasty = "say \"hi\" \\ back\nnew line\ttab \u{1B}[31mred\u{07} \u{202E}evil\u{2069} \u{85} é 🏈 \u{2028}"
        let evil = Member(id: bob.id, nick: "b\u{1B}ob")
        let line = try #require(json.render(message(from: evil, text: nasty), room: "r", reader: alice.id))
        #expect(!line.unicodeScalars.contains { $0.value < 0x20 || TerminalText.isUnsafe($0) })
        #expect(line.contains(#"say \"hi\" \\ back\u000anew line\u0009tab \u001b[31mred\u0007 \u202eevil\u2069"#))
        let fields = try object(line)
        // A message's line break (U+2028) reaches scripts as \n.
        #expect(fields["text"] as? String == nasty.replacingOccurrences(of: "\u{2028}", with: "\n"))
        #expect(fields["nick"] as? String == "b\u{1B}ob")
    }

    @Test func historyLineHasNoShownTime() throws {
        let stored = event(bob.id, 3, .chat(text: "touchdown"), at: kickoff + .seconds(2))
        let fields = try object(json.history(stored, from: bob, gameTime: kickoff, room: "superbowl"))
        #expect(fields["type"] as? String == "message")
        #expect(fields["id"] as? String == bob.id.hex + "#3")
        #expect(fields["from"] as? String == bob.id.hex)
        #expect(fields["text"] as? String == "touchdown")
        #expect(fields["sent_at"] as? Int64 == kickoffMs + 2000)
        #expect(fields["game_ms"] as? Int64 == kickoffMs)
        #expect(fields["shown_at"] == nil)
        #expect(fields["held_ms"] == nil)
        #expect(json.history(event(bob.id, 4, .leave, at: .epoch), from: bob, gameTime: nil, room: "r") == nil)
    }
}

@Suite struct HumanRendererTests {
    /// While both are here each shows with its id: the words say what the first one shows as too,
    /// not only the newcomer.
    @Test func aNickConflictSaysWhatBothShowAs() {
        let twin = Member(id: node(9), nick: "bob", sharesNick: true)
        let line = plain.nickConflict(twin, knownID: bob.id)
        let newcomer = String(twin.id.hex.prefix(8)), first = String(bob.id.hex.prefix(8))
        #expect(line == "* careful: bob#\(newcomer) (\(twin.id)) is a new key calling itself bob; the bob you met first "
            + "is \(bob.id). Theirs show as bob#\(newcomer); while both are here, the first's as bob#\(first).")
    }

    @Test func messageShowsGameClockNickAndHoldBack() {
        let line = plain.render(message(), room: "superbowl", reader: alice.id)
        #expect(line == "23:30:05 bob: what a catch  (held 2.0 s)")
    }

    @Test func uncalibratedMessageShowsSentTimeMarked() {
        let line = plain.render(message(held: .zero, game: nil), room: "superbowl", reader: alice.id)
        #expect(line == "~23:30:07 bob: what a catch")
    }

    @Test func otherRoomsArePrefixed() {
        let line = plain.render(message(held: .milliseconds(350)), room: "nba", reader: alice.id, inCurrentRoom: false)
        #expect(line == "[nba] 23:30:05 bob: what a catch  (held 350 ms)")
    }

    @Test func thoseCalibratedWithoutTheReaderAreOneLineAndTheNeverPlacedNoNews() throws {
        // A late joiner (alice) finds bob and carol placed with each other, dave with nobody.
        let report = OffsetReport(entries: [
            .init(member: alice, offset: nil, behindReader: nil),
            .init(member: bob, offset: .seconds(2), behindReader: nil),
            .init(member: carol, offset: .zero, behindReader: nil),
            .init(member: dave, offset: nil, behindReader: nil),
        ])
        var told = report
        told.noticed = Set(report.entries.filter { OffsetReport.isNoticeable($0, after: nil) }.map(\.member.id))
        #expect(told.noticed == [bob.id, carol.id])
        let text = try #require(plain.render(.offsetsChanged(told), room: "superbowl", reader: alice.id))
        #expect(text == "* bob and carol are calibrated with each other; you are not yet")
    }

    @Test func aMomentCueNamesNothingAndSaysWhatPlacesTheReader() throws {
        let text = try #require(plain.render(.momentCue(by: bob), room: "superbowl", reader: alice.id))
        #expect(text.hasPrefix("* bob marked a moment; its name waits for your stream"))
        #expect(text.contains("/now kickoff"))
        let fields = try object(json.render(.momentCue(by: bob), room: "superbowl", reader: alice.id))
        #expect(fields["type"] as? String == "moment_cue" && fields["by"] as? String == "bob")
        #expect(Set(fields.keys) == ["type", "room", "by", "by_id", "suggested"], "nothing of the moment itself")
    }

    @Test func offsetsInWordsRelativeToTheReader() throws {
        let text = try #require(plain.render(offsets, room: "superbowl", reader: alice.id))
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains("* bob is 2.0 s behind you"))
        #expect(lines.contains("* carol is 1.5 s ahead of you"))
        #expect(lines.contains("* dave is not calibrated any more"))
        #expect(!text.contains("alice"))
    }

    @Test func aMessageOfSeveralLinesShowsThemUnderTheFirstIndented() throws {
        let list = plain.render(message(text: "to watch:\u{2028}\u{2028}\u{2028}1. Mahomes\u{2028}2. Kelce\u{2028}\u{2028}"), room: "r", reader: alice.id)
        #expect(list == """
            23:30:05 bob: to watch:

                          1. Mahomes
                          2. Kelce  (held 2.0 s)
            """)
        // A line break can never start a line that passes for a message of its own.
        let forged = try #require(plain.render(message(text: "hi\u{2028}23:30:06 alice: spoiler\u{1B}[2J"), room: "r", reader: alice.id))
        #expect(forged.split(separator: "\n").dropFirst().allSatisfy { $0.hasPrefix("              ") })
        #expect(!forged.contains("\u{1B}"))
        // In another room each row carries the room's tag, so the lines stay under each other.
        let tagged = plain.render(message(text: "1. Mahomes\u{2028}2. Kelce"), room: "@bob", reader: alice.id, inCurrentRoom: false)
        #expect(tagged == "[@bob] 23:30:05 bob: 1. Mahomes\n[@bob]               2. Kelce  (held 2.0 s)")
        let fields = try object(json.render(message(text: "1. Mahomes\u{2028}2. Kelce"), room: "r", reader: alice.id))
        #expect(fields["text"] as? String == "1. Mahomes\n2. Kelce")
    }

    @Test func aHeldMessageSaysTheWaitTheStatusLineCountsNotTheJitter() throws {
        guard case .message(var shown) = message(held: .milliseconds(11_447)) else { return }
        shown.waited = .milliseconds(11_450)
        let line = try #require(plain.render(.message(shown), room: "r", reader: alice.id))
        #expect(line.hasSuffix("(held 11.5 s)"), "\(line)")
        let fields = try object(json.render(.message(shown), room: "r", reader: alice.id))
        #expect(fields["held_ms"] as? Int64 == 11_447)
    }

    @Test func anOffsetHeardInTheSoundSaysHowSureInWordsAndTheNumberStaysInJSON() throws {
        func heard(_ confidence: Double) -> RoomOutput {
            .offsetsChanged(OffsetReport(entries: [
                .init(member: bob, offset: .seconds(2), behindReader: .seconds(2),
                      heard: .init(matches: 3, confidence: confidence, sigma: .milliseconds(900) / Int64(confidence)))
            ], noticed: [bob.id]))
        }
        #expect(plain.render(heard(106), room: "r", reader: alice.id) == "* bob is 2.0 s behind you (heard, sure)")
        #expect(plain.render(heard(17), room: "r", reader: alice.id) == "* bob is 2.0 s behind you (heard, fairly sure)")
        #expect(plain.render(heard(9.5), room: "r", reader: alice.id) == "* bob is 2.0 s behind you (heard, roughly)")
        let fields = try object(json.render(heard(17), room: "r", reader: alice.id))
        let members = try #require(fields["members"] as? [[String: Any]])
        let sound = try #require(members.first?["heard"] as? [String: Any])
        #expect(sound["confidence"] as? Double == 17)
    }

    @Test func theShieldAndAWildMarkAreSaidInWordsAndInJSON() throws {
        let unplaced = try #require(plain.render(.unplaced(shield: .seconds(90)), room: "superbowl", reader: alice.id))
        #expect(unplaced.hasPrefix("* not placed in superbowl yet: others' words wait 90 s"))
        #expect(unplaced.contains("/shield off"))
        let off = try #require(plain.render(.unplaced(shield: nil), room: "superbowl", reader: alice.id))
        #expect(off.contains("the shield is off"))
        let line = try #require(json.render(.unplaced(shield: .seconds(90)), room: "superbowl", reader: alice.id))
        #expect(try object(line)["type"] as? String == "unplaced")
        #expect(try object(line)["shield_seconds"] as? Int == 90)
        #expect(try object(json.shield(nil, changed: true))["seconds"] is NSNull)
        #expect(plain.shield(.seconds(60), changed: true).hasPrefix("* shield on: what people you are not placed with write waits 60 s"))

        let wild = WildMark(label: CalibrationLabel("kickoff")!, reach: .apart(from: bob, behind: .seconds(141)))
        #expect(
            plain.confirmMark(wild, room: "superbowl", proposedAgo: .seconds(141))
                == "* your mark of \"kickoff\" would put you 2 min 21 s behind bob (it was proposed 2 min 21 s ago); "
                + "Enter again (or /now kickoff) within 60 s to mark it anyway")
        let asked = try object(json.confirmMark(wild, room: "superbowl", proposedAgo: .seconds(141)))
        #expect(asked["type"] as? String == "confirm_mark")
        #expect(asked["behind_ms"] as? Int == 141_000)
        #expect(asked["label"] as? String == "kickoff")
    }

    @Test func offsetsWhenTheReaderIsNotCalibrated() throws {
        let report = RoomOutput.offsetsChanged(
            OffsetReport(entries: [
                .init(member: alice, offset: nil, behindReader: nil), .init(member: bob, offset: .zero, behindReader: nil),
            ], noticed: [bob.id]))
        let text = try #require(plain.render(report, room: "superbowl", reader: alice.id))
        #expect(text.contains("bob is calibrated; you are not yet"))
        // What to do about it is the unplaced notice's, said once.
        #expect(!text.contains("/now LABEL"))
        let onlyMe = RoomOutput.offsetsChanged(
            OffsetReport(entries: [.init(member: alice, offset: .zero, behindReader: .zero)]))
        #expect(plain.render(onlyMe, room: "superbowl", reader: alice.id) == nil)
    }

    @Test func onlyNoticeableChangesAreSaidToPeopleAndScriptsGetEveryReport() throws {
        guard case .offsetsChanged(var report) = offsets else { Issue.record("not a report"); return }
        report.noticed = [carol.id]
        let text = try #require(plain.render(.offsetsChanged(report), room: "superbowl", reader: alice.id))
        #expect(text == "* carol is 1.5 s ahead of you")
        report.noticed = []
        #expect(plain.render(.offsetsChanged(report), room: "superbowl", reader: alice.id) == nil)
        #expect(json.render(.offsetsChanged(report), room: "superbowl", reader: alice.id)?.contains("\"bob\":2000") == true)
    }

    @Test func aLateJoinersBlockAStrayMarkAndATakenBackMark() throws {
        guard case .message(let shown) = message(held: .zero) else { Issue.record("not a message"); return }
        let score = ShownScore(
            event: shown.event, from: bob, home: 7, guest: 3, shownAt: shown.shownAt, held: .zero,
            gameTime: shown.gameTime, isCorrection: false)
        let items: [ShownItem] = [.message(shown), .score(score), .message(shown)]
        let block = try #require(plain.render(.earlier(items), room: "superbowl", reader: alice.id))
        // The header counts every line that follows it, scores too, in the block's order.
        #expect(block.split(separator: "\n") == [
            "* 2 messages and 1 score from before you joined superbowl, by game time:", "23:30:05 bob: what a catch",
            "23:30:05 bob: score 7–3", "23:30:05 bob: what a catch",
        ])
        let lines = try #require(json.render(.earlier(items), room: "superbowl", reader: alice.id))
        #expect(lines.split(separator: "\n").count == 3)
        #expect(try object(String(lines.split(separator: "\n")[0]))["earlier"] as? Bool == true)
        #expect(try object(String(lines.split(separator: "\n")[1]))["type"] as? String == "score")
        #expect(try object(String(lines.split(separator: "\n")[1]))["earlier"] as? Bool == true)
        #expect(
            plain.render(.markSetAside(bob, label: "first down"), room: "superbowl", reader: alice.id)
                == "* bob's mark of \"first down\" does not fit the other marks: set aside until a mark of another moment confirms it")
        #expect(
            plain.render(.unmarked(label: "first down", by: bob), room: "superbowl", reader: alice.id)
                == "* bob took back the mark of \"first down\"")
    }

    @Test func promptsMarksAndMembership() {
        #expect(
            plain.render(.calibrationEvent(label: "kickoff", by: bob), room: "superbowl", reader: alice.id)
                == "* bob proposes \"kickoff\" — type /now kickoff when you see it")
        #expect(
            HumanRenderer(colors: false, interactive: true, timeZone: TimeZone(identifier: "UTC")!)
                .render(.calibrationEvent(label: "kickoff", by: bob), room: "superbowl", reader: alice.id)
                == "* bob proposes \"kickoff\" — press Enter when it is on your screen")
        #expect(
            plain.render(.calibrationEvent(label: "kickoff", by: alice), room: "superbowl", reader: alice.id)
                == "* you proposed \"kickoff\"")
        #expect(
            plain.render(.mark(label: "kickoff", by: bob, at: kickoff), room: "superbowl", reader: alice.id)
                == "* bob marked \"kickoff\"")
        #expect(plain.render(.joined(bob), room: "superbowl", reader: alice.id) == "* bob joined superbowl")
        #expect(plain.render(.left(bob), room: "superbowl", reader: alice.id) == "* bob left superbowl")
        #expect(plain.render(.joined(alice), room: "superbowl", reader: alice.id) == "* you joined superbowl")
        #expect(plain.peer(id: bob.id, nick: "bob", state: .gone) == "* bob (\(bob.id)) is gone")
        #expect(plain.error("no such room") == "! no such room")
        #expect(plain.info("a\nb") == "a\nb")
        #expect(
            plain.ready(id: alice.id, nick: "alice", port: 7700, dataDir: "/d")
                == "* alice (\(alice.id)) is listening on port 7700; data in /d")
    }

    @Test func noANSIWithoutColorsAndSomeWithThem() {
        let outputs = [
            message(), offsets, .calibrationEvent(label: "kickoff", by: bob), .joined(bob),
            .mark(label: "kickoff", by: bob, at: .epoch),
        ]
        for output in outputs {
            #expect(plain.render(output, room: "superbowl", reader: alice.id)?.contains("\u{1B}") == false)
            #expect(colored.render(output, room: "superbowl", reader: alice.id)?.contains("\u{1B}[") == true)
        }
        #expect(!plain.error("x").contains("\u{1B}"))
        #expect(colored.error("x").contains("\u{1B}[31m"))
    }

    @Test func peerTextCannotReachTheTerminalRaw() throws {
        let evil = Member(id: bob.id, nick: "bo\u{1B}]0;pwned\u{07}b")
        let text = "hi\u{1B}[2J\r\nthere \u{202E}dlrow\u{202C} \u{9B}31m \u{2066}x\u{2069}"
        for renderer in [plain, colored] {
            let outputs: [RoomOutput] = [
                message(from: evil, text: text), .calibrationEvent(label: "kick\u{1B}off", by: evil),
                .joined(evil), .mark(label: "\u{202E}x", by: evil, at: .epoch),
            ]
            for output in outputs {
                let line = try #require(renderer.render(output, room: "super\u{1B}bowl", reader: alice.id))
                let unsafe = line.unicodeScalars.filter { TerminalText.isUnsafe($0) && $0 != "\u{1B}" }
                #expect(unsafe.isEmpty)
                #expect(!line.contains("\n"))
                // The only ESCs left are the renderer's own colour codes.
                let stripped = line.replacingOccurrences(of: #"\x1B\[[0-9;]*m"#, with: "", options: .regularExpression)
                #expect(!stripped.contains("\u{1B}"))
            }
        }
        let line = plain.render(message(from: evil, text: text), room: "r", reader: alice.id)
        #expect(
            line == #"23:30:05 bo\x1B]0;pwned\x07b: hi\x1B[2J\x0D\x0Athere \u202Edlrow\u202C \x9B31m \u2066x\u2069"#
                + "  (held 2.0 s)")
    }

    @Test func historyLine() {
        let stored = event(bob.id, 3, .chat(text: "touchdown"), at: kickoff + .seconds(2))
        #expect(plain.history(stored, from: bob, gameTime: kickoff, room: "r") == "23:30:05 bob: touchdown")
        #expect(plain.history(stored, from: bob, gameTime: nil, room: "r") == "~23:30:07 bob: touchdown")
        // A second bob is told apart in history as everywhere else.
        let impostor = Member(id: bob.id, nick: "bob", sharesNick: true)
        #expect(plain.history(stored, from: impostor, gameTime: kickoff, room: "r") == "23:30:05 bob#\(bob.id.hex.prefix(8)): touchdown")
    }

    @Test func describeLag() {
        #expect(HumanRenderer.describeLag(nick: nil, behindReader: .seconds(2)) == "2.0 s behind you")
        #expect(HumanRenderer.describeLag(nick: "carol", behindReader: .milliseconds(-1_500)) == "carol is 1.5 s ahead of you")
        #expect(HumanRenderer.describeLag(nick: "dave", behindReader: nil) == "dave is not calibrated with you yet")
        #expect(HumanRenderer.describeLag(nick: nil, behindReader: .zero) == "in step with you")
    }
}

@Suite struct HumanFormatTests {
    @Test(arguments: [
        (Int64(0), "0 ms"), (350, "350 ms"), (-350, "350 ms"), (999, "999 ms"), (1000, "1.0 s"), (1999, "2.0 s"),
        (2000, "2.0 s"), (-1500, "1.5 s"), (59_940, "59.9 s"), (59_960, "1 min"), (95_000, "1 min 35 s"),
        (3_725_000, "1 h 2 min"), (7_200_000, "2 h"),
    ])
    func durations(milliseconds: Int64, text: String) {
        #expect(HumanFormat.duration(.milliseconds(milliseconds)) == text)
    }

    @Test func theLongestSpansSayHours() {
        #expect(HumanFormat.duration(.min) == "2562047788 h")
        #expect(HumanFormat.duration(.max) == "2562047788 h")
    }

    @Test func clockInAZone() {
        let utc = TimeZone(identifier: "UTC")!
        #expect(HumanFormat.clock(kickoff, timeZone: utc) == "23:30:05")
        #expect(HumanFormat.clock(kickoff, timeZone: TimeZone(secondsFromGMT: 3600)!) == "00:30:05")
        #expect(HumanFormat.clock(.milliseconds(sinceEpoch: -1), timeZone: utc) == "23:59:59")
        #expect(HumanFormat.clock(.epoch, timeZone: utc) == "00:00:00")
        #expect(HumanFormat.clock(.distantFuture, timeZone: utc).count == 8)
        #expect(HumanFormat.clock(.distantPast, timeZone: utc).count == 8)
    }
}

@Suite struct OutputSinkTests {
    init() { BrokenPipes.ignored }

    @Test func writesWholeLinesFromManyTasks() async throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        let sink = OutputSink(fileDescriptor: writeEnd)
        let reader = PipeReader(readEnd)
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    let pad = String(repeating: "x", count: 300)
                    for n in 0..<50 { sink.write("{\"task\":\(task),\"n\":\(n),\"pad\":\"\(pad)\"}") }
                }
            }
        }
        await Self.eventually { sink.isIdle }
        close(writeEnd)
        let lines = await reader.lines
        #expect(lines.count == 400)
        for line in lines { #expect(line.hasPrefix("{\"task\":") && line.hasSuffix("\"}")) }
        #expect(sink.failedWrites == 0)
    }

    @Test func aClosedReaderIsCountedNotFatal() async {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        close(fds[0])
        let sink = OutputSink(fileDescriptor: fds[1])
        sink.write("nobody reads this")
        await Self.eventually { sink.isIdle }
        #expect(sink.failedWrites == 1)
        close(fds[1])
    }

    @Test func renderedLinesKeepTheirPlaceAndAreMadeOnTheWritersThread() async throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let sink = OutputSink(fileDescriptor: fds[1])
        let reader = PipeReader(fds[0])
        let caller = pthread_self()
        let elsewhere = Mutex(0)
        for n in 0..<300 {
            if n % 3 == 0 {
                sink.write("plain \(n)")
            } else {
                sink.write {
                    if pthread_equal(pthread_self(), caller) == 0 { elsewhere.withLock { $0 += 1 } }
                    return n % 3 == 1 ? "made \(n)" : nil  // nil: no line at all
                }
            }
        }
        await Self.eventually { sink.isIdle }
        close(fds[1])
        let lines = await reader.lines
        let expected = (0..<300).compactMap { n in n % 3 == 0 ? "plain \(n)" : n % 3 == 1 ? "made \(n)" : nil }
        #expect(lines.map(String.init) == expected)
        #expect(elsewhere.withLock { $0 } == 200)
    }

    @Test func linesWrittenTogetherToAClosedReaderAreEachCounted() async {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        close(fds[0])
        let writer = AsyncFileWriter(fileDescriptor: fds[1])
        // Queued faster than the writer thread starts: most of them gathered into one write.
        for n in 0..<100 { writer.enqueue(Array("line \(n)\n".utf8)) }
        await Self.eventually { writer.isIdle }
        #expect(writer.failedWrites == 100)
        close(fds[1])
    }

    /// Reads a pipe to its end on a thread of its own, and hands over what it read without
    /// blocking a thread of the test pool (two cores: a blocked pool starves the other tests).
    final class PipeReader: Sendable {
        private let result: Task<String, Never>

        init(_ descriptor: Int32) {
            result = Task {
                await withCheckedContinuation { continuation in
                    Thread {
                        var bytes: [UInt8] = []
                        var chunk = [UInt8](repeating: 0, count: 65536)
                        while true {
                            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
                            if count < 0, errno == EINTR { continue }
                            guard count > 0 else { break }
                            bytes += chunk[..<count]
                        }
                        close(descriptor)
                        continuation.resume(returning: String(decoding: bytes, as: UTF8.self))
                    }.start()
                }
            }
        }

        /// Everything read, once the writer closed its end.
        var lines: [Substring] {
            get async { await result.value.split(separator: "\n") }
        }
    }

    /// Waits, without blocking a thread, until `done` holds.
    static func eventually(_ done: () -> Bool) async {
        for _ in 0..<30_000 where !done() { try? await Task.sleep(for: .milliseconds(1)) }
    }

    @Test func aReaderThatStopsReadingNeverStallsTheWriter() async throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let sink = OutputSink(fileDescriptor: fds[1])
        // 2 MB, thirty times what a pipe holds, while nobody reads: every call returns at once.
        let started = ContinuousClock.now
        for n in 0..<2000 { sink.write("\(n) " + String(repeating: "x", count: 1000)) }
        #expect(ContinuousClock.now - started < .seconds(5))
        let reader = PipeReader(fds[0])
        await Self.eventually { sink.isIdle }
        close(fds[1])
        let lines = await reader.lines
        #expect(lines.count == 2000)
        #expect(lines.enumerated().allSatisfy { $1.hasPrefix("\($0) ") })
        #expect(sink.droppedLines == 0)
    }

    @Test func aReaderTooFarBehindLosesLinesAndIsToldHowMany() async throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let writer = AsyncFileWriter(
            fileDescriptor: fds[1], limit: 200_000, droppedNotice: { Array("dropped \($0)\n".utf8) })
        let line = Array((String(repeating: "y", count: 999) + "\n").utf8)
        for _ in 0..<1000 { writer.enqueue(line) }
        #expect(writer.droppedWrites > 0)
        let dropped = writer.droppedWrites
        let reader = PipeReader(fds[0])
        await Self.eventually { writer.isIdle }
        close(fds[1])
        let lines = await reader.lines
        // One notice per run of drops: the writer may get to the pipe between two enqueues, so
        // the 1000 lines can make more than one run. Together they tell of every dropped line.
        let notices = lines.filter { $0.hasPrefix("dropped ") }
        #expect(!notices.isEmpty)
        #expect(notices.compactMap { Int($0.dropFirst("dropped ".count)) }.reduce(0, +) == dropped)
        #expect(lines.count == 1000 - dropped + notices.count)
    }
}
