import Foundation
public import HuddleCore

/// ``OutputRenderer`` for `huddle run --json`, the page and scripts (README, "Scripting"):
/// exactly one JSON object per line, never a colour.
///
/// JSON lines, one per call (extra keys may be added later; these stay):
///
/// ```text
/// {"type":"ready","id","nick","port","data_dir"}
/// {"type":"message","room","id","from","nick","text","sent_at","shown_at","shown_at_us","held_ms","waited_ms","game_ms"} (a line break in "text" is \n)
///     a message, join, leave or mark by a member people see under another name than its nick
///     (another node goes by the same nick: ``Member/displayName``) adds "display_name" ("bob#3f9a0c1e")
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
public struct JSONRenderer: OutputRenderer {
    public let picturesDirectory: String?
    public var isJSON: Bool { true }

    public init(picturesDirectory: String? = nil) {
        self.picturesDirectory = picturesDirectory
    }

    /// `nick`, and `display_name` after it when people see the member under another name
    /// (``Member/displayName``): the page shows what the console shows, and tells two keys apart.
    static func named(_ member: Member) -> [(String, JSONLine)] {
        let shown = member.displayName
        return [("nick", .string(member.nick))] + (shown == member.nick ? [] : [("display_name", .string(shown))])
    }

    public func history(_ event: Event, from member: Member, gameTime: WallTime?, room: String) -> String? {
        guard let text = event.body.messageText else { return nil }
        var fields: [(String, JSONLine)] = [
            ("type", "message"), ("room", .string(room)), ("id", .string(Self.eventID(event.id))),
            ("from", .string(event.origin.hex)),
        ] + Self.named(member) + [
            ("text", .string(Self.jsonText(text))), ("sent_at", .milliseconds(event.createdAt)),
            ("game_ms", .milliseconds(gameTime)),
        ]
        if let picture = event.body.picture { fields.append(("picture", pictureObject(picture, ready: isOnDisk(picture)))) }
        return JSONLine.object(fields).render()
    }

    // MARK: Node lines

    /// `{"type":"ready","id","nick","port","data_dir"}`
    public func ready(id: NodeID, nick: String, port: Int, dataDir: String) -> String {
        JSONLine.object([
            ("type", "ready"), ("id", .string(id.hex)), ("nick", .string(nick)), ("port", .int(Int64(port))),
            ("data_dir", .string(dataDir)),
        ]).render()
    }

    /// `{"type":"listening","source":"file","started_at":MS}`
    public func listening(source: String, startedAt: WallTime) -> String {
        JSONLine.object([("type", "listening"), ("source", .string(source)), ("started_at", .milliseconds(startedAt))])
            .render()
    }

    /// `{"type":"listening","state":"stopped","reason":...}`
    public func listeningStopped(reason: String?) -> String {
        JSONLine.object([("type", "listening"), ("state", "stopped"), ("reason", reason.map { .string($0) } ?? .null)])
            .render()
    }

    /// Where what a node wrote stands once its piped input ended: `waiting`, `delivered` or
    /// `not_sent` (the words for a person go to stderr).
    ///
    ///     {"type":"delivery","state":"waiting","timeout_ms":5000}
    ///     {"type":"delivery","state":"delivered","to":["bob"]}
    ///     {"type":"delivery","state":"not_sent","reason":"...","exit_code":3}
    static func delivery(state: String, fields: [(String, JSONLine)]) -> String {
        JSONLine.object([("type", "delivery"), ("state", .string(state))] + fields).render()
    }

    public func error(_ message: String) -> String {
        JSONLine.object([("type", "error"), ("message", .string(message))]).render()
    }

    /// As ``info(_:)``.
    public func notice(_ text: String) -> String {
        info(text)
    }

    /// `{"type":"info","kind":"talking_in","message":...}`
    public func notice(_ notice: NodeNotice) -> String {
        JSONLine.object([("type", "info"), ("kind", .string(notice.kind)), ("message", .string(notice.words))]).render()
    }

    public func info(_ text: String) -> String {
        JSONLine.object([("type", "info"), ("message", .string(text))]).render()
    }

    /// `{"type":"shield","seconds":90,"changed":true}`
    public func shield(_ shield: TimeSpan?, changed: Bool) -> String {
        JSONLine.object([("type", "shield"), ("seconds", Self.seconds(shield)), ("changed", .bool(changed))]).render()
    }

    /// `{"type":"confirm_mark","room","label","message","move_ms"|"nick"+"behind_ms","proposed_ago_ms"}`
    public func confirmMark(_ wild: WildMark, room: String, proposedAgo: TimeSpan?) -> String {
        var fields: [(String, JSONLine)] = [
            ("type", "confirm_mark"), ("room", .string(room)), ("label", .string(wild.label.normalized)),
            ("message", .string(confirmMarkWords(wild, proposedAgo: proposedAgo))),
        ]
        switch wild.reach {
        case .move(let move): fields.append(("move_ms", .milliseconds(move)))
        case .apart(let peer, let behind): fields += [("nick", .string(peer.nick)), ("behind_ms", .milliseconds(behind))]
        }
        if let proposedAgo { fields.append(("proposed_ago_ms", .milliseconds(proposedAgo))) }
        return JSONLine.object(fields).render()
    }

    /// `{"type":"nick_conflict","nick","id","known_id"}`
    public func nickConflict(_ member: Member, knownID: NodeID) -> String {
        JSONLine.object([
            ("type", "nick_conflict"), ("nick", .string(member.nick)), ("id", .string(member.id.hex)),
            ("known_id", .string(knownID.hex)),
        ]).render()
    }

    /// `{"type":"peer","id","nick","state"[,"address"][,"left":true]}`
    public func peer(id: NodeID, nick: String, state: PeerState, address: String? = nil, left: Bool = false) -> String {
        var fields: [(String, JSONLine)] = [
            ("type", "peer"), ("id", .string(id.hex)), ("nick", .string(nick)), ("state", .string(Self.name(of: state))),
        ]
        if let address { fields.append(("address", .string(address))) }
        if left { fields.append(("left", .bool(true))) }
        return JSONLine.object(fields).render()
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

    /// Whole seconds of `span` in JSON (`null` for none).
    static func seconds(_ span: TimeSpan?) -> JSONLine {
        span.map { .int($0.milliseconds / 1000) } ?? .null
    }

    /// A message's text for scripts: its line breaks (U+2028 on the wire, ``LongLine/lineBreak``)
    /// as `\n`, which `huddle send` turns back.
    static func jsonText(_ text: String) -> String {
        text.contains(LongLine.lineBreak) ? String(text.map { $0 == LongLine.lineBreak ? "\n" : $0 }) : text
    }

    // MARK: Room output

    /// A message's picture: `{"root","type","width","height","bytes","ready"[,"path"][,"unreadable"][,"refused"]}`;
    /// the path once it is all here (`ready`) and this renderer knows where pictures are (not a
    /// page's); `unreadable` when its blob does not open to what its event says; `refused` when it
    /// is not fetched (over a node's limits, past its writer's budget).
    func pictureObject(_ picture: Picture, ready: Bool, unreadable: Bool = false, refused: Bool = false) -> JSONLine {
        var fields: [(String, JSONLine)] = [
            ("root", .string(picture.rootHex)), ("type", .string(picture.type.mimeType)), ("width", .int(Int64(picture.width))),
            ("height", .int(Int64(picture.height))), ("bytes", .int(Int64(picture.byteCount))), ("ready", .bool(ready)),
        ]
        if ready, let path = path(of: picture) { fields.append(("path", .string(path))) }
        if picture.type.isClip { fields.append(("milliseconds", .int(Int64(picture.milliseconds)))) }
        if unreadable { fields.append(("unreadable", .bool(true))) }
        if refused { fields.append(("refused", .bool(true))) }
        return .object(fields)
    }

    public func render(
        _ output: RoomOutput, room: String, reader: NodeID, inCurrentRoom: Bool = true, directTo: String? = nil,
        isPrivate: Bool = false
    ) -> String? {
        let room = JSONLine.string(room)
        var fields: [(String, JSONLine)]
        func message(_ shown: ShownMessage, earlier: Bool) -> [(String, JSONLine)] {
            var fields: [(String, JSONLine)] = [
                ("type", "message"), ("room", room), ("id", .string(Self.eventID(shown.event.id))),
                ("from", .string(shown.from.id.hex)),
            ] + Self.named(shown.from) + [
                ("text", .string(Self.jsonText(shown.text))), ("sent_at", .milliseconds(shown.sentAt)),
                // shown_at is the machine's reading (whole ms, as the wire stamps events);
                // shown_at_us when the node printed it, for measures under a millisecond.
                ("shown_at", .milliseconds(shown.shownAt)), ("shown_at_us", .int(SystemClock.preciseWall().microsecondsSinceEpoch)),
                ("held_ms", .milliseconds(shown.held)),
                ("waited_ms", .milliseconds(shown.held > .zero ? max(shown.held, shown.waited) : .zero)),
                ("game_ms", .milliseconds(shown.gameTime)),
            ]
            if let directTo { fields += [("direct", .bool(true)), ("to", .string(directTo))] }
            if isPrivate { fields.append(("private", .bool(true))) }
            if earlier { fields.append(("earlier", .bool(true))) }
            if let picture = shown.picture {
                fields.append(("picture", pictureObject(
                    picture, ready: !shown.pictureMissing && !shown.pictureUnreadable && !shown.pictureRefused,
                    unreadable: shown.pictureUnreadable, refused: shown.pictureRefused)))
            }
            return fields
        }
        func score(_ score: ShownScore) -> [(String, JSONLine)] {
            var fields: [(String, JSONLine)] = [
                ("type", "score"), ("room", room), ("home", .int(Int64(score.home))), ("guest", .int(Int64(score.guest))),
                ("by", .string(score.from.nick)), ("by_id", .string(score.from.id.hex)),
                ("sent_at", .milliseconds(score.sentAt)), ("shown_at", .milliseconds(score.shownAt)),
                ("held_ms", .milliseconds(score.held)), ("game_ms", .milliseconds(score.gameTime)),
                ("waited_ms", .milliseconds(score.held > .zero ? max(score.held, score.waited) : .zero)),
                ("correction", .bool(score.isCorrection)),
            ]
            if let home = score.homeName, let guest = score.guestName {
                fields += [("home_team", .string(home)), ("guest_team", .string(guest))]
            }
            return fields
        }
        switch output {
        case .message(let shown):
            fields = message(shown, earlier: false)
        case .earlier(let items):
            // One line per message or score, as scripts read them; "earlier" says it is caught up on.
            return items.map { item in
                switch item {
                case .message(let shown): JSONLine.object(message(shown, earlier: true)).render()
                case .score(let shown): JSONLine.object(score(shown) + [("earlier", .bool(true))]).render()
                }
            }.joined(separator: "\n")
        case .calibrationEvent(let label, let by):
            fields = [
                ("type", "calibration"), ("room", room), ("label", .string(label)), ("by", .string(by.nick)),
                ("by_id", .string(by.id.hex)),
            ]
        case .mark(let label, let by, let at):
            fields = [
                ("type", "mark"), ("room", room), ("label", .string(label)),
            ] + Self.named(by) + [("id", .string(by.id.hex)), ("at", .milliseconds(at))]
        case .momentCue(let by):
            fields = [
                ("type", "moment_cue"), ("room", room), ("by", .string(by.nick)), ("by_id", .string(by.id.hex)),
                ("suggested", .array(SpoilerFreeMoment.suggested.map { .string($0) })),
            ]
        case .shieldGrew(let shield, let ahead, let behind, let apart):
            fields = [
                ("type", "shield_grew"), ("room", room), ("seconds", Self.seconds(shield)), ("ahead", .string(ahead.nick)),
                ("behind", .string(behind.nick)), ("apart_ms", .milliseconds(apart)),
            ]
        case .unmarked(let label, let by):
            fields = [
                ("type", "unmark"), ("room", room), ("label", .string(label)), ("nick", .string(by.nick)),
                ("id", .string(by.id.hex)),
            ]
        case .markSetAside(let member, let label):
            fields = [
                ("type", "mark_set_aside"), ("room", room), ("label", .string(label)), ("nick", .string(member.nick)),
                ("id", .string(member.id.hex)),
            ]
        case .joined(let member), .left(let member):
            let type: JSONLine = if case .joined = output { "join" } else { "leave" }
            fields = [("type", type), ("room", room)] + Self.named(member) + [("id", .string(member.id.hex))]
        case .offsetsChanged(let report):
            fields = [
                ("type", "offsets"), ("room", room), ("offsets", .object(Self.offsetsByNick(report))),
                (
                    "members",
                    .array(
                        report.entries.map { entry in
                            var member: [(String, JSONLine)] = [
                                ("id", .string(entry.member.id.hex)), ("nick", .string(entry.member.nick)),
                                ("offset_ms", .milliseconds(entry.offset)),
                                ("behind_you_ms", .milliseconds(entry.behindReader)),
                            ]
                            if let heard = entry.heard { member.append(("heard", Self.heard(heard))) }
                            return .object(member)
                        })
                ),
            ]
        case .score(let shown):
            fields = score(shown)
        case .pictureArrived(let shown):
            fields = [
                ("type", "picture"), ("room", room), ("id", .string(Self.eventID(shown.event.id))),
                ("from", .string(shown.from.id.hex)), ("nick", .string(shown.from.nick)),
            ]
            if let picture = shown.picture {
                fields.append(("picture", pictureObject(picture, ready: !shown.pictureUnreadable, unreadable: shown.pictureUnreadable)))
            }
        case .unplaced(let shield):
            fields = [
                ("type", "unplaced"), ("room", room), ("shield_seconds", Self.seconds(shield)),
                ("suggested", .array(SpoilerFreeMoment.suggested.map { .string($0) })),
            ]
        case .teamsNamed(let home, let guest, let by):
            fields = [
                ("type", "teams"), ("room", room), ("home", .string(home)), ("guest", .string(guest)),
                ("by", .string(by.nick)),
            ]
        case .lagStepped(let member, let change, let offset, let heard):
            fields = [
                ("type", "step"), ("room", room), ("nick", .string(member.nick)), ("id", .string(member.id.hex)),
                ("change_ms", .milliseconds(change)), ("offset_ms", .milliseconds(offset)), ("heard", .bool(heard)),
            ]
        case .equivocated(let member, let seq):
            fields = [
                ("type", "fault"), ("room", room), ("nick", .string(member.nick)), ("id", .string(member.id.hex)),
                ("seq", .int(Int64(clamping: seq))), ("fault", "equivocation"),
            ]
        }
        return JSONLine.object(fields).render()
    }

    /// What sound contributed to an offset: `{"matches","confidence","sigma_ms"}`.
    static func heard(_ sound: Calibration.Placement.Sound) -> JSONLine {
        .object([
            ("matches", .int(Int64(sound.matches))), ("confidence", .double((sound.confidence * 10).rounded() / 10)),
            ("sigma_ms", .double((Double(sound.sigma.microseconds) / 100).rounded() / 10)),
        ])
    }

    /// `{NICK: offset}`; a nick two members share gets `#` and the member's short id appended,
    /// so that no key repeats.
    static func offsetsByNick(_ report: OffsetReport) -> [(String, JSONLine)] {
        var counts: [String: Int] = [:]
        for entry in report.entries { counts[entry.member.nick, default: 0] += 1 }
        return report.entries.map { entry in
            let nick = entry.member.nick
            let key = counts[nick, default: 0] > 1 ? "\(nick)#\(entry.member.id)" : nick
            return (key, .milliseconds(entry.offset))
        }
    }
}
