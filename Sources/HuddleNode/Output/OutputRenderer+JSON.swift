import Foundation
import HuddleCore

/// ``OutputRenderer``'s JSON: one object per line for `huddle run --json`, the page and scripts
/// (README, "Scripting").
extension OutputRenderer {

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

    func renderJSON(_ output: RoomOutput, room: String, directTo: String?, isPrivate: Bool) -> String {
        let room = JSONLine.string(room)
        var fields: [(String, JSONLine)]
        func message(_ shown: ShownMessage, earlier: Bool) -> [(String, JSONLine)] {
            var fields: [(String, JSONLine)] = [
                ("type", "message"), ("room", room), ("id", .string(Self.eventID(shown.event.id))),
                ("from", .string(shown.from.id.hex)), ("nick", .string(shown.from.nick)),
                ("text", .string(Self.jsonText(shown.text))), ("sent_at", .milliseconds(shown.sentAt)),
                ("shown_at", .milliseconds(shown.shownAt)), ("held_ms", .milliseconds(shown.held)),
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
                ("type", "mark"), ("room", room), ("label", .string(label)), ("nick", .string(by.nick)),
                ("id", .string(by.id.hex)), ("at", .milliseconds(at)),
            ]
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
            fields = [("type", type), ("room", room), ("nick", .string(member.nick)), ("id", .string(member.id.hex))]
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
