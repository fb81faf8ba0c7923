import Foundation
public import HuddleCore

/// Turns what a node has to show into the text `huddle run` writes on stdout: readable lines for
/// a person, or exactly one JSON object per line with `--json`.
///
/// Pure: every method returns the text (without the final newline) and writes nothing; hand it
/// to an ``OutputSink``. Text that came from other nodes (nicks, messages, labels, room names) is
/// passed through ``TerminalText`` in human mode, and ANSI colours are used only when `colors` is
/// set (and never in JSON).
///
/// ```swift
/// let renderer = OutputRenderer(json: false, colors: OutputSink.standardOutputIsTerminal)
/// for output in room.receive(event, now: now) {
///     if let text = renderer.render(output, room: room.room, reader: me.id) { sink.write(text) }
/// }
/// // 21:03:17 bob: what a catch  (held 2.0 s)
/// // * carol is 1.5 s ahead of you
/// ```
///
/// JSON lines, one per call (extra keys may be added later; these stay):
///
/// ```text
/// {"type":"ready","id","nick","port","data_dir"}
/// {"type":"message","room","id","from","nick","text","sent_at","shown_at","held_ms","waited_ms","game_ms"} (a line break in "text" is \n)
///     held_ms: how long this node held it; waited_ms: how long after it was written the reader saw it,
///     as the console's "(held 3.0 s)" says (a restart does not reset it); 0 for a line shown on arrival
///     a direct message adds "direct":true and "to" (the nick it was sent to); its room is "@NICK";
///     a message of a private room adds "private":true
/// {"type":"calibration","room","label","by","by_id"}   (a name that could spoil comes at the reader's moment)
/// {"type":"mark","room","label","nick","id","at"}
/// {"type":"moment_cue","room","by","by_id","suggested":[LABEL]}   (someone the reader is not placed with
///     marked a moment whose name waits; the labels to mark to be placed)
/// {"type":"shield_grew","room","seconds","ahead","behind","apart_ms"}   (two placed streams run farther
///     apart than the shield covered: it grew)
/// {"type":"offsets","room","offsets":{NICK: ms|null},"members":[{"id","nick","offset_ms","behind_you_ms"[,"heard"]}]}
///     "heard":{"matches","confidence","sigma_ms"} when sound (heard matches) placed the member
/// {"type":"join"|"leave","room","nick","id"}
/// {"type":"peer","id","nick","state"[,"address"]}
/// {"type":"info","message"}    {"type":"error","message"}
///     what the node said happened or answered adds "kind" ("talking_in", "paused", "who"...:
///     ``NodeNotice/kind``)
/// {"type":"delivery","state":"waiting"|"delivered"|"not_sent",...}   (piped input ended)
/// {"type":"nick_conflict","nick","id","known_id"}
/// {"type":"step","room","nick","id","change_ms","offset_ms","heard"}   (a step in someone's lag; heard: found by sound)
/// {"type":"listening","source":"file"|"device","started_at"}   (listening began: started_at is the
///     node-clock ms its first sample counts as heard)
/// {"type":"listening","state":"stopped","reason"|null}
/// {"type":"score","room","home","guest","by","by_id","sent_at","shown_at","held_ms","waited_ms","game_ms","correction"[,"home_team","guest_team"]}
/// {"type":"teams","room","home","guest","by"}
/// {"type":"web","url","pair_url","code","expires_in_s"}   (--web, /web: how a phone opens and pairs
///     with the page; for the terminal only, never sent to a page)
///     a message or score a late joiner catches up on (in one block) adds "earlier":true
/// {"type":"unplaced","room","shield_seconds"|null}   (the reader has no offset in the room: others'
///     words wait shield_seconds after they were written, or show at once with the shield off)
/// {"type":"shield","seconds"|null,"changed"}   (/shield: as it stands, or as the reader just set it)
/// {"type":"confirm_mark","room","label","message"[,"move_ms"][,"nick","behind_ms"][,"proposed_ago_ms"]}
///     (a mark that would move the reader far was not made: the same mark again within 60 s makes it)
/// ```
///
/// In human mode a message's time is its game time (the reference's clock) as local `HH:MM:SS`;
/// while its sender is not calibrated it is the time it was sent, marked with `~`.
public struct OutputRenderer: Sendable {
    /// Whether lines are JSON objects.
    public let json: Bool
    /// Whether human lines carry ANSI colours (never with `json`).
    public let colors: Bool
    /// Whether the reader is at the interactive console, where one key marks a proposed moment;
    /// prompts then say to press Enter rather than to type `/now LABEL`.
    public let interactive: Bool
    let timeZone: TimeZone
    /// Where the node keeps pictures (``PictureStore``): a shown picture's file is named there.
    public let picturesDirectory: String?

    public init(json: Bool, colors: Bool, interactive: Bool = false, picturesDirectory: String? = nil) {
        self.init(json: json, colors: colors, interactive: interactive, timeZone: .current, picturesDirectory: picturesDirectory)
    }

    init(json: Bool, colors: Bool, interactive: Bool = false, timeZone: TimeZone, picturesDirectory: String? = nil) {
        self.json = json
        self.colors = colors && !json
        self.interactive = interactive && !json
        self.timeZone = timeZone
        self.picturesDirectory = picturesDirectory
    }

    /// Where a shown picture's file is (``PictureStore/shownPath(of:)``), when this renderer knows.
    func path(of picture: Picture) -> String? {
        picturesDirectory.map { "\($0)/\(picture.rootHex).\(picture.type.fileExtension)" }
    }

    // MARK: Room output

    /// The line(s) for one room output, or `nil` if there is nothing to show (an offset report
    /// that says nothing about anyone but the reader). Human mode may return several lines
    /// joined by `"\n"`; JSON mode always returns one line.
    ///
    /// - Parameters:
    ///   - room: the room it happened in.
    ///   - reader: this node, for "you" and for offsets relative to it.
    ///   - inCurrentRoom: `false` puts the room's name in front of human lines, for rooms other
    ///     than the console's current one.
    ///   - directTo: for a direct message, the nick it was sent to.
    ///   - isPrivate: the room is a private room (JSON messages say `"private": true`).
    public func render(
        _ output: RoomOutput, room: String, reader: NodeID, inCurrentRoom: Bool = true, directTo: String? = nil,
        isPrivate: Bool = false
    ) -> String? {
        json
            ? renderJSON(output, room: room, directTo: directTo, isPrivate: isPrivate)
            : renderHuman(output, room: room, reader: reader, prefix: inCurrentRoom)
    }

    /// A chat message from the store, as `huddle history` and `/history` list it: like a shown
    /// message without `shown_at` and `held_ms`. `nil` for an event that is not a chat message.
    ///
    /// - Parameters:
    ///   - member: the sender (its nick from its latest join; people see ``Member/displayName``).
    ///   - gameTime: the message's game time, `nil` while its sender is not calibrated.
    public func history(_ event: Event, from member: Member, gameTime: WallTime?, room: String) -> String? {
        guard let text = event.body.messageText else { return nil }
        let picture = event.body.picture
        if json {
            var fields: [(String, JSONLine)] = [
                ("type", "message"), ("room", .string(room)), ("id", .string(Self.eventID(event.id))),
                ("from", .string(event.origin.hex)), ("nick", .string(member.nick)), ("text", .string(Self.jsonText(text))),
                ("sent_at", .milliseconds(event.createdAt)), ("game_ms", .milliseconds(gameTime)),
            ]
            if let picture { fields.append(("picture", pictureObject(picture, ready: isOnDisk(picture)))) }
            return JSONLine.object(fields).render()
        }
        return messageLine(
            time: gameTime ?? event.createdAt, calibrated: gameTime != nil, from: member,
            text: picture.map { pictureTag($0, missing: !isOnDisk($0), withPath: true) + (text.isEmpty ? "" : " " + text) } ?? text,
            isReader: false, held: .zero)
    }

    /// Whether a picture's own file is on disk (shown, or being listed by history after it was).
    func isOnDisk(_ picture: Picture) -> Bool {
        path(of: picture).map { FileManager.default.fileExists(atPath: $0) } ?? false
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

    /// Once the node listens: `{"type":"ready",...}` or a line saying where it listens.
    public func ready(id: NodeID, nick: String, port: Int, dataDir: String) -> String {
        if json {
            return JSONLine.object([
                ("type", "ready"), ("id", .string(id.hex)), ("nick", .string(nick)), ("port", .int(Int64(port))),
                ("data_dir", .string(dataDir)),
            ]).render()
        }
        return starred(
            "\(bold(safe(nick))) (\(id)) is listening on port \(port); data in \(safe(dataDir))")
    }

    /// Listening began: `{"type":"listening","source":"file","started_at":MS}`, or a line saying so.
    public func listening(source: String, startedAt: WallTime) -> String {
        if json {
            return JSONLine.object([
                ("type", "listening"), ("source", .string(source)), ("started_at", .milliseconds(startedAt)),
            ]).render()
        }
        let what = source == "file" ? "the audio file (as if heard from \(HumanFormat.clock(startedAt, timeZone: timeZone)))" : "the default input"
        return starred(
            "listening to \(what): features of what it hears (not the sound, but in a quiet room enough to tell "
                + "some spoken words apart) go, sealed for each, only to peers that listen too until your offsets "
                + "are known, then 4 s every 2 minutes to the people in your rooms; nobody else can read them. "
                + "/listen off stops it")
    }

    /// Listening ended: `reason` says why, `nil` when a file played to its end.
    public func listeningStopped(reason: String?) -> String {
        if json {
            return JSONLine.object([
                ("type", "listening"), ("state", "stopped"), ("reason", reason.map { .string($0) } ?? .null),
            ]).render()
        }
        return starred("stopped listening: \(reason.map(safe) ?? "the audio file played to its end")")
    }

    /// Where what a node wrote stands once its piped input ended: `waiting`, `delivered` or
    /// `not_sent` (JSON only; the words go to stderr).
    ///
    ///     {"type":"delivery","state":"waiting","timeout_ms":5000}
    ///     {"type":"delivery","state":"delivered","to":["bob"]}
    ///     {"type":"delivery","state":"not_sent","reason":"...","exit_code":3}
    func delivery(state: String, fields: [(String, JSONLine)]) -> String {
        JSONLine.object([("type", "delivery"), ("state", .string(state))] + fields).render()
    }

    /// Something went wrong that the user should read.
    public func error(_ message: String) -> String {
        if json { return JSONLine.object([("type", "error"), ("message", .string(message))]).render() }
        return lines(message).map { style("! " + $0, .red) }.joined(separator: "\n")
    }

    /// Something that happened to this node, said like the room's notices: `* now talking in
    /// nfl`, `* paused: ...` (`{"type":"info","message":...}` in JSON, as ``info(_:)``).
    public func notice(_ text: String) -> String {
        if json { return info(text) }
        return lines(text).map(starred).joined(separator: "\n")
    }

    /// What the machine said happened, or its answer to a command: starred, or plain for an
    /// answer (``NodeNotice/isAnswer``). JSON: `{"type":"info","kind":"talking_in","message":...}`.
    public func notice(_ notice: NodeNotice) -> String {
        if json {
            return JSONLine.object([("type", "info"), ("kind", .string(notice.kind)), ("message", .string(notice.words))])
                .render()
        }
        return notice.isAnswer ? info(notice.words) : self.notice(notice.words)
    }

    /// The answer to a console command (`/who`, `/rooms`, `/help`...), possibly several lines.
    public func info(_ text: String) -> String {
        if json { return JSONLine.object([("type", "info"), ("message", .string(text))]).render() }
        return lines(text).joined(separator: "\n")
    }

    /// The shield as it stands, or as the reader just set it (`/shield`).
    ///
    ///     {"type":"shield","seconds":90,"changed":true}
    public func shield(_ shield: TimeSpan?, changed: Bool) -> String {
        if json {
            return JSONLine.object([("type", "shield"), ("seconds", Self.seconds(shield)), ("changed", .bool(changed))])
                .render()
        }
        let text =
            if let shield {
                "shield on: what people you are not placed with write waits \(HumanFormat.seconds(shield)) after "
                    + "it was written (/shield off if your stream is ahead of everyone's)"
            } else {
                "shield off: what people you are not placed with write shows at once, and may spoil (/shield on)"
            }
        return starred(text)
    }

    /// A mark that would move the reader far, not made: press again to make it.
    ///
    ///     {"type":"confirm_mark","room","label","message","move_ms"|"nick"+"behind_ms","proposed_ago_ms"}
    public func confirmMark(_ wild: WildMark, room: String, proposedAgo: TimeSpan?) -> String {
        let label = wild.label.normalized
        var because: String
        var fields: [(String, JSONLine)] = [("type", "confirm_mark"), ("room", .string(room)), ("label", .string(label))]
        switch wild.reach {
        case .move(let move):
            because = "your mark of \"\(label)\" would move you \(HumanFormat.duration(move)) "
                + (move > .zero ? "further behind" : "ahead")
            fields.append(("move_ms", .milliseconds(move)))
        case .apart(let peer, let behind):
            because = "your mark of \"\(label)\" would put you \(HumanFormat.duration(behind)) "
                + "\(behind >= .zero ? "behind" : "ahead of") \(safe(peer.displayName))"
            fields += [("nick", .string(peer.nick)), ("behind_ms", .milliseconds(behind))]
        }
        if let proposedAgo, proposedAgo > WildMark.largestMove {
            because += " (it was proposed \(HumanFormat.duration(proposedAgo)) ago)"
        }
        let message = because
            + "; Enter again (or /now \(label)) within \(HumanFormat.seconds(WildMark.confirmWindow)) to mark it anyway"
        guard json else { return style("* " + safe(message), .yellow) }
        fields.insert(("message", .string(message)), at: 3)
        if let proposedAgo { fields.append(("proposed_ago_ms", .milliseconds(proposedAgo))) }
        return JSONLine.object(fields).render()
    }

    /// Whole seconds of `span` in JSON (`null` for none).
    static func seconds(_ span: TimeSpan?) -> JSONLine {
        span.map { .int($0.milliseconds / 1000) } ?? .null
    }

    /// A node joined under a nick first seen with another node: it may pass itself off as
    /// someone else. From now on it shows as `nick#abcd` (see ``Member/displayName``).
    ///
    ///     {"type":"nick_conflict","nick","id","known_id"}
    public func nickConflict(_ member: Member, knownID: NodeID) -> String {
        if json {
            return JSONLine.object([
                ("type", "nick_conflict"), ("nick", .string(member.nick)), ("id", .string(member.id.hex)),
                ("known_id", .string(knownID.hex)),
            ]).render()
        }
        let nick = safe(member.nick)
        return style(
            "* careful: \(safe(member.displayName)) (\(member.id)) is a new key calling itself \(nick); "
                + "the \(nick) you met first is \(knownID). Theirs show as \(safe(member.displayName)).", .yellow)
    }

    /// A peer was found, stopped answering, came back or went away.
    /// `left`: it is gone because it said goodbye (`"left": true` in JSON, "left" in words).
    public func peer(id: NodeID, nick: String, state: PeerState, address: String? = nil, left: Bool = false) -> String {
        if json {
            var fields: [(String, JSONLine)] = [
                ("type", "peer"), ("id", .string(id.hex)), ("nick", .string(nick)),
                ("state", .string(Self.name(of: state))),
            ]
            if let address { fields.append(("address", .string(address))) }
            if left { fields.append(("left", .bool(true))) }
            return JSONLine.object(fields).render()
        }
        let words =
            switch state {
            case .alive: "is here"
            case .suspect: "is not answering"
            case .gone: left ? "left" : "is gone"
            }
        let at = address.map { " at \(safe($0))" } ?? ""
        return starred("\(nickText(Member(id: id, nick: nick), reader: nil)) (\(id))\(at) \(words)")
    }

    /// The name `--json` and `huddle status` give a peer state.
    public static func name(of state: PeerState) -> String {
        switch state {
        case .alive: "alive"
        case .suspect: "suspect"
        case .gone: "gone"
        }
    }

    /// An event id as the JSON output writes it: `<64 hex digits of the origin>#<seq>`.
    public static func eventID(_ id: EventID) -> String {
        "\(id.origin.hex)#\(id.seq)"
    }

    // MARK: Human

    private func renderHuman(_ output: RoomOutput, room: String, reader: NodeID, prefix: Bool) -> String? {
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

    /// A message's text for scripts: its line breaks (U+2028 on the wire, ``LongLine/lineBreak``)
    /// as `\n`, which `huddle send` turns back.
    static func jsonText(_ text: String) -> String {
        text.contains(LongLine.lineBreak) ? String(text.map { $0 == LongLine.lineBreak ? "\n" : $0 }) : text
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
