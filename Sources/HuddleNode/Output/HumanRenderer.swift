import Foundation
public import HuddleCore

/// ``OutputRenderer`` for a person: `huddle run` at a terminal, `huddle history`, the console.
/// Text that came from other nodes (nicks, messages, labels, room names) is passed through
/// ``TerminalText``, and ANSI colours are used only when `colors` is set.
///
/// ```text
/// 21:03:17 bob: what a catch  (held 2.0 s)
/// * carol is 1.5 s ahead of you
/// ```
///
/// In human mode a message's time is its game time (the reference's clock) as local `HH:MM:SS`;
/// while its sender is not calibrated it is the time it was sent, marked with `~`.
public struct HumanRenderer: OutputRenderer {
    /// Whether lines carry ANSI colours.
    public let colors: Bool
    /// Whether the reader is at the interactive console, where one key marks a proposed moment;
    /// prompts then say to press Enter rather than to type `/now LABEL`.
    public let interactive: Bool
    let timeZone: TimeZone
    public let picturesDirectory: String?
    public var isJSON: Bool { false }

    public init(colors: Bool, interactive: Bool = false, picturesDirectory: String? = nil) {
        self.init(colors: colors, interactive: interactive, timeZone: .current, picturesDirectory: picturesDirectory)
    }

    init(colors: Bool, interactive: Bool = false, timeZone: TimeZone, picturesDirectory: String? = nil) {
        self.colors = colors
        self.interactive = interactive
        self.timeZone = timeZone
        self.picturesDirectory = picturesDirectory
    }

    public func history(_ event: Event, from member: Member, gameTime: WallTime?, room: String) -> String? {
        guard let text = event.body.messageText else { return nil }
        let picture = event.body.picture
        return messageLine(
            time: gameTime ?? event.createdAt, calibrated: gameTime != nil, from: member,
            text: picture.map { pictureTag($0, missing: !isOnDisk($0), withPath: true) + (text.isEmpty ? "" : " " + text) } ?? text,
            isReader: false, held: .zero)
    }

    /// Where a member's stream is relative to the reader's, in words: "2.0 s behind you",
    /// "1.5 s ahead of you", "in step with you", or "not calibrated with you yet" when `nil`.
    /// With a nick, a sentence: "bob is 2.0 s behind you".
    public static func describeLag(nick: String?, behindReader: TimeSpan?) -> String {
        let words = behindReader.map(HumanFormat.lag) ?? "not calibrated with you yet"
        guard let nick else { return words }
        return "\(TerminalText.escaped(nick)) is \(words)"
    }

    // MARK: Node lines

    public func ready(id: NodeID, nick: String, port: Int, dataDir: String) -> String {
        starred("\(bold(safe(nick))) (\(id)) is listening on port \(port); data in \(safe(dataDir))")
    }

    public func listening(source: String, startedAt: WallTime) -> String {
        let what = source == "file" ? "the audio file (as if heard from \(HumanFormat.clock(startedAt, timeZone: timeZone)))" : "the default input"
        return starred(
            "listening to \(what): features of what it hears (not the sound, but in a quiet room enough to tell "
                + "some spoken words apart) go, sealed for each, only to peers that listen too until your offsets "
                + "are known, then 4 s every 2 minutes to the people in your rooms; nobody else can read them. "
                + "/listen off stops it")
    }

    public func listeningStopped(reason: String?) -> String {
        starred("stopped listening: \(reason.map(safe) ?? "the audio file played to its end")")
    }

    public func error(_ message: String) -> String {
        lines(message).map { style("! " + $0, .red) }.joined(separator: "\n")
    }

    /// `* now talking in nfl`, `* paused: ...`: starred, each line.
    public func notice(_ text: String) -> String {
        lines(text).map(starred).joined(separator: "\n")
    }

    /// Starred, or plain for an answer (``NodeNotice/isAnswer``).
    public func notice(_ notice: NodeNotice) -> String {
        notice.isAnswer ? info(notice.words) : self.notice(notice.words)
    }

    public func info(_ text: String) -> String {
        lines(text).joined(separator: "\n")
    }

    public func shield(_ shield: TimeSpan?, changed: Bool) -> String {
        let text =
            if let shield {
                "shield on: what people you are not placed with write waits \(HumanFormat.seconds(shield)) after "
                    + "it was written (/shield off if your stream is ahead of everyone's)"
            } else {
                "shield off: what people you are not placed with write shows at once, and may spoil (/shield on)"
            }
        return starred(text)
    }

    public func confirmMark(_ wild: WildMark, room: String, proposedAgo: TimeSpan?) -> String {
        style("* " + safe(confirmMarkWords(wild, proposedAgo: proposedAgo)), .yellow)
    }

    public func nickConflict(_ member: Member, knownID: NodeID) -> String {
        let nick = safe(member.nick)
        return style(
            "* careful: \(safe(member.displayName)) (\(member.id)) is a new key calling itself \(nick); "
                + "the \(nick) you met first is \(knownID). Theirs show as \(safe(member.displayName)); while both "
                + "are here, the first's as \(nick)#\(knownID.hex.prefix(8)).", .yellow)
    }

    public func peer(id: NodeID, nick: String, state: PeerState, address: String? = nil, left: Bool = false) -> String {
        let words =
            switch state {
            case .alive: "is here"
            case .suspect: "is not answering"
            case .gone: left ? "left" : "is gone"
            }
        let at = address.map { " at \(safe($0))" } ?? ""
        return starred("\(nickText(Member(id: id, nick: nick), reader: nil)) (\(id))\(at) \(words)")
    }

    // MARK: Room output

    public func render(
        _ output: RoomOutput, room: String, reader: NodeID, inCurrentRoom prefix: Bool = true, directTo: String? = nil,
        isPrivate: Bool = false
    ) -> String? {
        let lines: [String]
        switch output {
        case .message(let shown):
            lines = [messageLine(shown, reader: reader)]
        case .earlier(let items):
            let messages = items.count { if case .message = $0 { true } else { false } }
            let scores = items.count - messages
            var count = messages == 1 ? "1 message" : "\(messages) messages"
            if scores > 0 { count += scores == 1 ? " and 1 score" : " and \(scores) scores" }
            lines = [starred("\(count) from before you joined \(safe(room)), by game time:")]
                + items.map { item in
                    switch item {
                    case .message(let shown): messageLine(shown, reader: reader)
                    case .score(let shown): scoreLine(shown, reader: reader)
                    }
                }
        case .calibrationEvent(let label, let by):
            let label = safe(label)
            if by.id == reader {
                lines = [style("* you proposed \"\(label)\"", .yellow)]
            } else {
                let hint = interactive ? "press Enter when it is on your screen" : "type /now \(label) when you see it"
                lines = [style("* \(nickText(by, reader: reader)) proposes \"\(label)\" — \(hint)", .yellow)]
            }
        case .mark(let label, let by, _):
            let who = by.id == reader ? "you" : nickText(by, reader: reader)
            lines = [starred("\(who) marked \"\(safe(label))\"")]
        case .momentCue(let by):
            let how = "/now kickoff as it reaches your screen"
            lines = [style(
                "* \(nickText(by, reader: reader)) marked a moment; its name waits for your stream, as words do. "
                    + "To be placed, mark a moment anyone can name ahead (\(SpoilerFreeMoment.inWords)): \(how)", .yellow)]
        case .shieldGrew(let shield, let ahead, let behind, let apart):
            lines = [starred(
                "the shield is now \(HumanFormat.duration(shield)): \(nickText(behind, reader: reader)) runs "
                    + "\(HumanFormat.duration(apart)) behind \(nickText(ahead, reader: reader)), so your stream may be that far "
                    + "behind too; words from those you are not placed with wait that long (/shield S sets yours)")]
        case .unmarked(let label, let by):
            let who = by.id == reader ? "you" : nickText(by, reader: reader)
            lines = [starred("\(who) took back the mark of \"\(safe(label))\"")]
        case .markSetAside(let member, let label):
            if member.id == reader {
                lines = [style(
                    "* your mark of \"\(safe(label))\" does not fit the other marks: set aside until a mark of another "
                        + "moment confirms it (/unmark \(safe(label)) takes it back)", .yellow)]
            } else {
                let who = nickText(member, reader: reader)
                lines = [style(
                    "* \(who)'s mark of \"\(safe(label))\" does not fit the other marks: set aside until a mark of "
                        + "another moment confirms it", .yellow)]
            }
        case .joined(let member):
            lines = [starred("\(member.id == reader ? "you" : nickText(member, reader: reader)) joined \(safe(room))")]
        case .left(let member):
            lines = [starred("\(member.id == reader ? "you" : nickText(member, reader: reader)) left \(safe(room))")]
        case .offsetsChanged(let report):
            lines = offsetLines(report, reader: reader)
        case .score(let score):
            lines = [scoreLine(score, reader: reader)]
        case .pictureArrived(let shown):
            let clock = (shown.gameTime == nil ? "~" : "") + HumanFormat.clock(shown.gameTime ?? shown.sentAt, timeZone: timeZone)
            lines = [starred(
                "\(nickText(shown.from, reader: reader))'s photo of \(clock) "
                    + (shown.pictureUnreadable ? "arrived, and does not open: its bytes are not what its writer says" : "is here"))]
        case .unplaced(let shield):
            let room = safe(room)
            if let shield {
                // Said before anyone proposed a moment too (a viewer who only listens hears it at
                // start), so it says what to do when one is, not that one is on the screen.
                let how =
                    interactive
                    ? "Enter as a moment someone proposes reaches your screen, or /now kickoff (or the anthem, 2nd half, "
                        + "end of break: names that spoil nothing) places you, as /listen does"
                    : "/now LABEL at a moment others mark (kickoff, the anthem, 2nd half, end of break: names that spoil "
                        + "nothing), or /listen, places you"
                lines = [style(
                    "* not placed in \(room) yet: others' words wait \(HumanFormat.seconds(shield)) so none can spoil. "
                        + "\(how); /shield off if you are ahead of everyone", .yellow)]
            } else {
                lines = [style(
                    "* you are not placed in \(room) yet, and the shield is off: what others write shows at once, "
                        + "and may spoil (/shield on)", .yellow)]
            }
        case .teamsNamed(let home, let guest, let by):
            lines = [starred("\(by.id == reader ? "you" : nickText(by, reader: reader)) named the sides: \(safe(home)) v \(safe(guest))")]
        case .lagStepped(let member, let change, _, let heard):
            let amount = HumanFormat.duration(change)
            let words = change >= .zero ? "fell \(amount) further behind" : "caught up \(amount)"
            let who = member.id == reader ? "your stream" : nickText(member, reader: reader)
            lines = [starred("\(who) \(words) \(heard ? "(heard)" : "(a step in the marks: offsets follow it)")")]
        case .equivocated(let member, let seq):
            lines = [style(
                "* \(nickText(member, reader: reader)) signed two versions of one message (#\(seq)): "
                    + "hiding it and all it sends after", .yellow)]
        }
        guard !lines.isEmpty else { return nil }
        guard !prefix else { return lines.joined(separator: "\n") }
        let tag = style("[\(safe(room))]", .dim)
        // Every row, a message's further lines too, so they stay under its first line's text.
        return lines.flatMap { $0.split(separator: "\n", omittingEmptySubsequences: false) }
            .map { "\(tag) \($0)" }.joined(separator: "\n")
    }

    private func scoreLine(_ score: ShownScore, reader: NodeID) -> String {
        let board = HumanFormat.score(home: score.home, guest: score.guest, homeName: score.homeName, guestName: score.guestName)
        let time = score.gameTime ?? score.sentAt
        var line = "\(style(HumanFormat.clock(time, timeZone: timeZone), .dim)) \(nickText(score.from, reader: reader)): score \(safe(board))"
        if score.isCorrection { line += "  (an earlier moment: the score stays as it was)" }
        if score.held > .zero { line += style("  (held \(HumanFormat.duration(max(score.held, score.waited))))", .dim) }
        return line
    }

    private func messageLine(_ shown: ShownMessage, reader: NodeID) -> String {
        messageLine(
            time: shown.gameTime ?? shown.sentAt, calibrated: shown.gameTime != nil, from: shown.from,
            text: shown.picture.map {
                pictureTag($0, missing: shown.pictureMissing, unreadable: shown.pictureUnreadable, refused: shown.pictureRefused)
                    + (shown.text.isEmpty ? "" : " " + shown.text)
            } ?? shown.text,
            isReader: shown.from.id == reader, held: shown.held, waited: shown.waited)
    }

    /// `[photo 1600×900]`, `[photo 1600×900 /path/to/it.jpg]` (history), or `[photo 1600×900, on its
    /// way]` while its bytes are not all here: what a message's picture shows as in a terminal.
    /// A live line's tag names no file: the node says under it where the file is and its number
    /// for `/open` (`Node.showPicturesAtConsole`); history's does.
    func pictureTag(
        _ picture: Picture, missing: Bool, unreadable: Bool = false, refused: Bool = false, withPath: Bool = false
    ) -> String {
        let size =
            picture.type.isClip
            ? "clip \(HumanFormat.duration(.milliseconds(Int64(picture.milliseconds)))) \(picture.width)×\(picture.height)"
            : "photo \(picture.width)×\(picture.height)"
        if refused { return "[\(size), not fetched: over what a node takes, or past its writer's budget]" }
        if unreadable { return "[\(size) that does not open: its bytes are not what its writer says]" }
        if missing { return "[\(size), on its way]" }
        guard withPath, let path = path(of: picture) else { return "[\(size)]" }
        return "[\(size) \(path)]"
    }

    private func messageLine(
        time: WallTime, calibrated: Bool, from: Member, text: String, isReader: Bool, held: TimeSpan,
        waited: TimeSpan = .zero
    ) -> String {
        let clock = (calibrated ? "" : "~") + HumanFormat.clock(time, timeZone: timeZone)
        let rows = Self.rows(of: text)
        var line = "\(style(clock, .dim)) \(nickText(from, reader: isReader ? from.id : nil)): \(safe(rows[0]))"
        // A message of several lines (a pasted list): each further line under the first's text,
        // indented, so no line of it can pass for a message of its own.
        let indent = String(repeating: " ", count: DisplayWidth.of("\(clock) \(safe(from.displayName)): "))
        for row in rows.dropFirst() { line += "\n" + (row.isEmpty ? "" : indent + safe(row)) }
        // The wait as the status line counts lags, so "(held 11.5 s)" sits under "11.5 s behind".
        if held > .zero { line += "  " + style("(held \(HumanFormat.duration(max(held, waited))))", .dim) }
        return line
    }

    /// A message's lines, as a console shows them: blank lines at either end left out and a run of
    /// them inside kept as one (a peer's message of 4 096 line breaks is not a screenful).
    static func rows(of text: String) -> [String] {
        var rows: [String] = []
        for row in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == LongLine.lineBreak || $0 == "\n" }) {
            let blank = row.allSatisfy(\.isWhitespace)
            if blank && (rows.isEmpty || rows.last == "") { continue }
            rows.append(blank ? "" : String(row))
        }
        while rows.last == "" { rows.removeLast() }
        return rows.isEmpty ? [""] : rows
    }

    private func offsetLines(_ report: OffsetReport, reader: NodeID) -> [String] {
        let me = report.entries.first { $0.member.id == reader }
        let readerCalibrated = me?.offset != nil
        var lines: [String] = []
        // Those placed with each other while the reader is not: one line, however many.
        var placedWithoutReader: [String] = []
        // Only what changed enough to notice (see ``OffsetReport/noticed``).
        for entry in report.entries where entry.member.id != reader && report.noticed.contains(entry.member.id) {
            let who = nickText(entry.member, reader: reader)
            if let lag = entry.behindReader {
                let heard = entry.heard.map { " (heard, \(HumanFormat.sureness(confidence: $0.confidence)))" } ?? ""
                lines.append(starred("\(who) is \(HumanFormat.lag(lag))\(heard)"))
            } else if entry.offset == nil {
                lines.append(starred("\(who) is not calibrated any more"))
            } else if readerCalibrated {
                lines.append(starred("\(who) is calibrated with other viewers, not yet with you"))
            } else {
                placedWithoutReader.append(who)
            }
        }
        switch placedWithoutReader.count {
        case 0: break
        case 1: lines.append(starred("\(placedWithoutReader[0]) is calibrated; you are not yet"))
        default:
            let names = placedWithoutReader.dropLast().joined(separator: ", ") + " and " + placedWithoutReader.last!
            lines.append(starred("\(names) are calibrated with each other; you are not yet"))
        }
        // What the reader can do while it is not placed is said once, by ``RoomOutput/unplaced(shield:)``.
        return lines
    }

    // MARK: Pieces

    private func safe(_ text: some StringProtocol) -> String { TerminalText.escaped(text) }

    private func lines(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { safe($0) }
    }

    private func starred(_ text: String) -> String { "* " + text }

    private func bold(_ text: String) -> String { style(text, .bold) }

    private func style(_ text: String, _ style: ANSIStyle) -> String {
        colors ? ANSIStyle.wrap(text, code: style.rawValue) : text
    }

    /// A member's nick, made safe, coloured by id (bold for the reader itself).
    private func nickText(_ member: Member, reader: NodeID?) -> String {
        let nick = safe(member.displayName)
        guard colors else { return nick }
        if member.id == reader { return ANSIStyle.wrap(nick, code: ANSIStyle.bold.rawValue) }
        let index = Int(member.id.bytes.reduce(0) { ($0 &* 31 &+ UInt32($1)) } % UInt32(ANSIStyle.nickColors.count))
        return ANSIStyle.wrap(nick, code: ANSIStyle.nickColors[index])
    }
}
