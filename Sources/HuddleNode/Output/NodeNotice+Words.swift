public import HuddleCore

/// The machine's notices and problems in the words a viewer reads. The machine says what
/// happened (``NodeNotice``, ``CommandProblem``); only this file words it, for the console, the
/// JSON lines and `huddle send`.
///
/// ```swift
/// NodeNotice.talkingIn(room: "superbowl").words       // "now talking in superbowl"
/// CommandProblem.noRoom.words                          // "you are not in a room: /join ROOM first"
/// ```
extension NodeNotice {
    public var words: String {
        switch self {
        case .talkingIn(let room):
            return "now talking in \(room)"
        case .left(let room, let nowIn):
            return nowIn.map { "left \(room); now talking in \($0)" } ?? "left \(room)"
        case .reopened(let room):
            return "opened private room \(room) again"
        case .noPassphraseGiven(let room):
            return "not joined \(room): no passphrase given"
        case .locked(let names, let count):
            let which = names.count == count ? names.joined(separator: ", ") : "\(count) private rooms"
            return "this run has no passphrase for \(which): /private ROOM opens it"
        case .otherPassphrase(let nick, let room):
            return "\(nick) has another passphrase for \(room): you cannot read each other"
        case .route(let nick, let through?):
            return "\(nick) is reachable only through \(through)"
        case .route(let nick, nil):
            return "\(nick) is reachable directly again"
        case .unanswered(let peer):
            return peer.words
        case .alone(let rooms, true):
            let which = rooms.isEmpty ? "" : " (you are in \(rooms.joined(separator: ", ")))"
            return "no other Huddle node announces itself on this network\(which): are your friends on the same "
                + "Wi-Fi, not a guest one, and running huddle? If you know a friend's address, start with "
                + "--peer ADDRESS:PORT"
        case .alone(_, false):
            return "this computer does not hear its own mDNS announcement, so nobody here can find it: multicast "
                + "(UDP 5353) is blocked, by a firewall or a VPN that holds the route, or the mDNS daemon "
                + "(avahi-daemon) does not answer; sudo huddle doctor says which. --peer ADDRESS:PORT works without mDNS"
        case .otherProtocol(let nick, let address, let theirs, let ours) where theirs < ours:
            return "\(nick) (\(address.host)) runs an older Huddle (protocol \(theirs); this one speaks \(ours)), so "
                + "you cannot talk: \(nick) should update Huddle (huddle --version says which one runs)"
        case .otherProtocol(let nick, let address, let theirs, let ours):
            return "\(nick) (\(address.host)) runs a newer Huddle (protocol \(theirs); this one speaks \(ours)), so "
                + "you cannot talk: update Huddle on this computer"
        case .directHeldByShield(let nick):
            return "you and \(nick) share no calibration yet, so \(nick)'s shield holds your direct messages "
                + "(90 s, unless \(nick) turned it off); mark a moment in a room you are both in to hold them back exactly"
        case .paused(let already?):
            return "already paused, for \(HumanFormat.elapsed(already)); /resume when your stream plays"
        case .paused(nil):
            return "paused: nothing new is shown until you /resume (Ctrl-Q on the console)"
        case .notPaused:
            return "not paused"
        case .resumed(let span, let rooms):
            let added =
                rooms.isEmpty
                ? "not calibrated anywhere, so no offset changed"
                : "your offset grew by \(HumanFormat.duration(span)) in \(rooms.joined(separator: ", "))"
            return "resumed after \(HumanFormat.elapsed(span)): \(added)"
        case .listeningAlready(true, let source?):
            return "already listening (\(source))"
        case .listeningAlready(true, nil):
            return "already starting to listen"
        case .listeningAlready(false, _):
            return "not listening"
        case .ignoring(let label, let room):
            return "you will not be asked to mark \"\(label)\" in \(room)"
        case .namedMoment(let label):
            return "\"\(label)\" reaches those placed with you at their own moment; those not placed yet see only "
                + "that you marked a moment. Names that spoil nothing (\(SpoilerFreeMoment.inWords)) reach everyone at "
                + "once and place those who mark them too"
        case .markedAtFirstPress(let label, let room, let at, let ago):
            return "marked \"\(label)\" in \(room) at \(HumanFormat.clock(at)), your first press, "
                + "\(HumanFormat.duration(ago)) ago (/unmark \(label) takes it back)"
        case .delayed(let nudge, let room, let others):
            let said = "delay \(nudge > .zero ? "+" : "-")\(HumanFormat.duration(nudge)) in \(room)"
            guard let others else {
                return "\(said): it counts once you are placed (/now LABEL at a moment others mark, or /listen)"
            }
            if others.isEmpty { return "\(said): nobody else is placed yet" }
            return "\(said): now " + others.map { "\($0.name) \(HumanFormat.lag($0.behind))" }.joined(separator: ", ")
        case .historyStart(0, let room):
            return "no messages in \(room) yet"
        case .historyStart(let count, let room):
            let what = count == 1 ? "the last message" : "the last \(count) messages"
            return "history: \(what) in \(room), in game-time order"
        case .historyEnd:
            return "end of history"
        case .who(let room, nil):
            return "nobody in \(room)"
        case .who(_, let glance?):
            return RoomGlance.who(in: glance)
        case .rooms(let rooms):
            return rooms.words
        case .status(let status):
            return RoomGlance.statusLine(of: status)
        }
    }

    /// An answer to a command the reader typed (`/who`, `/rooms`, `/status`, `/history`,
    /// `/listen` that changes nothing), said plainly; the rest happened to the node and is said
    /// with a `* `.
    public var isAnswer: Bool {
        switch self {
        case .listeningAlready, .historyStart, .historyEnd, .who, .rooms, .status: true
        default: false
        }
    }

    /// The notice's kind in JSON (`"kind":"talking_in"`), for a program that acts on it rather
    /// than reading it.
    public var kind: String {
        switch self {
        case .talkingIn: "talking_in"
        case .left: "left"
        case .reopened: "reopened"
        case .noPassphraseGiven: "no_passphrase_given"
        case .locked: "locked"
        case .otherPassphrase: "other_passphrase"
        case .route: "route"
        case .unanswered: "unanswered"
        case .alone: "alone"
        case .otherProtocol: "other_protocol"
        case .directHeldByShield: "direct_held_by_shield"
        case .paused: "paused"
        case .notPaused: "not_paused"
        case .resumed: "resumed"
        case .listeningAlready: "listening_already"
        case .ignoring: "ignoring"
        case .markedAtFirstPress: "marked_at_first_press"
        case .namedMoment: "named_moment"
        case .delayed: "delayed"
        case .historyStart: "history_start"
        case .historyEnd: "history_end"
        case .who: "who"
        case .rooms: "rooms"
        case .status: "status"
        }
    }
}

extension Unanswered {
    /// What is wrong and what to do, for a person who sees nobody: the likeliest cause first.
    var words: String {
        let port = address.port
        let allowTheirs = "sudo ufw allow \(port)/udp (or sudo firewall-cmd --add-port=\(port)/udp)"
        if heardFrom {
            return "\(nick) (\(address.host)) is on the network and reaches you, but does not answer on UDP \(port): "
                + "a firewall on \(nick)'s computer drops what you send. On \(nick)'s: \(allowTheirs); "
                + "sudo huddle doctor there names the rule"
        }
        let allowYours = ownPort == port ? "the same on yours" : "sudo ufw allow \(ownPort)/udp on yours"
        return "\(nick) (\(address.host)) is on the network but does not answer on UDP \(port), and nothing of "
            + "\(nick)'s reaches you: a firewall on either computer, or the Wi-Fi keeps devices apart (guest "
            + "networks do). On \(nick)'s: \(allowTheirs), and \(allowYours); sudo huddle doctor on each says which"
    }
}

extension RoomsGlance {
    /// `your rooms: superbowl (current), nfl`, then each room seen on the network with who is in it.
    var words: String {
        let yours = joined.map { $0.label + ($0.current ? " (current)" : "") }
        var lines = ["your rooms: " + (yours.isEmpty ? "none" : yours.joined(separator: ", "))]
        if seen.isEmpty {
            lines.append("no rooms seen on the network yet")
        } else {
            lines += seen.map { "  \($0.label): \($0.nicks.joined(separator: ", "))" }
        }
        return lines.joined(separator: "\n")
    }
}

extension CommandProblem {
    public var words: String {
        switch self {
        case .invalid(let why): why
        case .notFrom(let face, let command): face.refusalWords(for: command)
        case .noRoom: "you are not in a room: /join ROOM first"
        case .notIn(let room): "you are not in \(room)"
        case .blankLabel: "a label cannot be blank"
        case .noMarkToTakeBack(let label, let room): "you have no mark of \"\(label)\" in \(room) to take back"
        case .noMomentWaiting: "no moment is waiting for your mark; /now LABEL marks a new one"
        case .notSent(let why): "not sent: \(why)"
        case .privateNeedsPassphrase(let room):
            "\(room) is a private room on this node: start with --passphrase-file FILE, or type /private \(room)"
        case .keyFailed(let room, let why): "could not derive the key for \(room): \(why)"
        case .wrongPassphrase(let room, let nick): "wrong passphrase for \(room)? \(nick) is in a \(room) with another one"
        case .weakDirectKey(let nick, let peer):
            "\(nick) (\(peer)) offers a key for direct messages that anyone could read them with: no direct messages with it"
        case .direct(let problem): problem.words
        case .picture(let problem): "picture not sent: \(problem)"
        }
    }
}
