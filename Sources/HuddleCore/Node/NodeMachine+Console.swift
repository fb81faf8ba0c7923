/// What the reader types: console lines and keys, control requests, and what the console shows
/// under the conversation (``consoleView(now:)``).
extension NodeMachine {
    /// Runs one console line whose Enter arrived at `at` (wall ms). A bad line is answered with
    /// an error and changes nothing; `/quit` emits ``NodeEffect/quit``.
    mutating func consoleLine(_ line: String, at: WallTime, now: NodeTime) {
        let command: ConsoleCommand
        do {
            command = try ConsoleCommand(parsing: line)
        } catch .emptyLine {
            return
        } catch {
            return reject(.invalid("\(error)"))
        }
        run(command, at: at, now: now)
    }

    /// A console key that marks the moment on offer (the console's one-key mark), with the
    /// label it offered when the key arrived.
    mutating func markOffered(_ label: String?, at: WallTime, now: NodeTime) {
        inCurrentRoom { machine, room in machine.markOffered(label, in: room, at: at, now: now) }
    }

    mutating func run(_ command: ConsoleCommand, at: WallTime, now: NodeTime) {
        if let refused = Self.refusal(of: command, from: answering ?? .console) { return reject(refused) }
        switch command {
        case .quit:
            emit(.quit)
        case .web(let command):
            emit(.web(command))
        case .photo(let path, let caption):
            preparePicture(.file(path), caption: caption, now: now)
        case .open(let number):
            emit(.openPicture(number))
        case .doctor:
            emit(.doctor(answering ?? .console))
        case .help(let all):
            show(.help(all: all))
        case .join(let room):
            join(room, now: now)
        case .joinPrivate(let room):
            askPassphrase(for: room)
        case .direct(let target, let text):
            if case .failure(let problem) = sendDirect(to: target, text: text, now: now), problem != .notSent {
                reject(.direct(problem))
            }
        case .pause:
            pause(at: at, now: now)
        case .resume:
            resume(at: at, now: now)
        case .status:
            say(.status(statusGlance(now: now)))
        case .listen(let on):
            listenCommand(on)
        case .score(let home, let guest):
            // Timed at the Enter, like a mark: the score is of that moment of the stream.
            inCurrentRoom { machine, room in machine.originate(.score(home: home, guest: guest), in: room, at: at, now: now) }
        case .teams(let home, let guest):
            inCurrentRoom { machine, room in machine.originate(.teams(home: home, guest: guest), in: room, now: now) }
        case .rooms:
            say(.rooms(roomsGlance()))
        case .say(let text):
            inCurrentRoom { machine, room in machine.originate(.chat(text: text), in: room, now: now) }
        case .leave:
            inCurrentRoom { machine, room in machine.leave(room, now: now) }
        case .who:
            inCurrentRoom { machine, room in machine.say(machine.who(in: room)) }
        case .event(let label):
            inCurrentRoom { machine, room in
                guard let label = CalibrationLabel(label) else { return machine.reject(.blankLabel) }
                machine.originate(.calibrationEvent(label: label.normalized), in: room, now: now)
                machine.tellOnceWhereNamesGo(label)
            }
        case .now(let label?):
            inCurrentRoom { machine, room in machine.mark(label, in: room, at: at, now: now) }
        case .now(nil):
            inCurrentRoom { machine, room in
                machine.markOffered(machine.rooms[room]?.markOffer(now: at)?.label.normalized, in: room, at: at, now: now)
            }
        case .ignore(let label):
            inCurrentRoom { machine, room in
                guard let label = CalibrationLabel(label) else { return machine.reject(.blankLabel) }
                machine.rooms[room]?.ignore(label: label)
                machine.say(.ignoring(label: label.normalized, room: machine.name(of: room)))
            }
        case .unmark(let label):
            inCurrentRoom { machine, room in machine.unmark(label, in: room, now: now) }
        case .delay(let nudge):
            inCurrentRoom { machine, room in
                guard machine.originate(.delayNudge(milliseconds: nudge.milliseconds), in: room, now: now) != nil else {
                    return
                }
                machine.say(machine.nudged(by: nudge, in: room))
            }
        case .history(let count):
            inCurrentRoom { machine, room in machine.history(count, in: room) }
        case .shield(let command):
            shieldCommand(command, now: now)
        }
    }

    /// What a `/delay` did, as a person asks it: who is ahead of or behind this viewer now.
    func nudged(by nudge: TimeSpan, in room: String) -> NodeNotice {
        guard let session = rooms[room], session.calibration.placement(of: identity.id) != nil else {
            return .delayed(by: nudge, room: name(of: room), others: nil)
        }
        let others = session.offsetReport.entries.compactMap { entry -> Standing? in
            guard entry.member.id != identity.id, let lag = entry.behindReader else { return nil }
            return Standing(name: entry.member.displayName, behind: lag)
        }
        return .delayed(by: nudge, room: name(of: room), others: others)
    }

    /// `/shield`, `/shield off`, `/shield on`, `/shield S`: sets how long messages from writers
    /// the reader is not placed with wait, in every room (held ones are re-timed), and says so.
    /// The reader's setting is a floor: where the current room showed two streams farther apart,
    /// the shield there is longer, and that is said too.
    mutating func shieldCommand(_ command: ConsoleCommand.ShieldCommand, now: NodeTime) {
        switch command {
        case .show:
            show(.shield(shield, changed: false))
            return sayShieldGrown(now: now)
        case .off: shield = nil
        case .on: shield = shieldWhenOn
        case .seconds(let seconds):
            shield = .seconds(Int64(seconds))
            shieldWhenOn = .seconds(Int64(seconds))
        }
        show(.shield(shield, changed: true))
        let shield = shield
        for room in rooms.loaded {
            let outputs = withRoom(room, now: now) { $0.setShield(shield, now: now.wall) }
            show(outputs, room: room, now: now)
        }
        sayShieldGrown(now: now)
    }

    /// Says why the current room's shield is longer than the reader's setting, if it is.
    private mutating func sayShieldGrown(now: NodeTime) {
        guard let room = currentRoom, let session = rooms[room], let floor = session.shieldFloor,
            let shield = session.shield, shield > floor, let spread = session.widestSpread
        else { return }
        show(
            [.shieldGrew(to: shield, ahead: session.member(spread.ahead), behind: session.member(spread.behind), apart: spread.apart)],
            room: room, now: now)
    }

    /// `/history N`: the last messages of a room, each at its game time.
    mutating func history(_ count: Int, in room: String) {
        let lines = shownHistory(count, in: room)
        // Between a header and a footer, so the lines are not taken for new messages.
        say(.historyStart(count: lines.count, room: name(of: room)))
        if lines.isEmpty { return }
        for line in lines { show(line) }
        say(.historyEnd)
    }

    /// The last `count` messages of `room` (the current room if `nil`) that the reader has been
    /// shown, each at its game time: what `/history` lists, and what a page opened later starts
    /// with. Never one still held back.
    public func shownHistory(_ count: Int, in room: String? = nil) -> [NodeOutput] {
        guard let room = room ?? currentRoom, let session = rooms[room] else { return [] }
        return session.history(last: count).map { event in
            .history(
                event, from: session.member(event.origin), gameTime: session.calibration.gameTime(of: event),
                room: name(of: room))
        }
    }

    /// A chat line sent through the control socket (`huddle send`) into the joined room people
    /// call `name`. Returns the event, or why there is none.
    public mutating func say(_ text: String, inRoomNamed name: String, now: NodeTime) -> Result<Event, SendRefusal> {
        guard let room = joinedRoom(named: name) else { return .failure(.notInRoom(name)) }
        // Line breaks travel as U+2028 (``LongLine/lineBreak``): the wire's strings hold no control character.
        let trimmed = LongLine.flattened(text.trimmingWhitespace())
        guard !trimmed.isEmpty else { return .failure(.empty) }
        guard let event = originate(.chat(text: trimmed), in: room, now: now) else { return .failure(.refused) }
        return .success(event)
    }

    /// A console line sent through the control socket (`huddle send --room R "/now kickoff"`): run
    /// in the joined room people call `name` as if typed at the console there, timed at `at`.
    /// The console stays in the room it was in, unless the line moved it (`/join`). What the
    /// line says comes out as outputs, like the console's. Commands that need the console
    /// itself (`/quit`, `/private`, whose passphrase is typed there) are refused.
    public mutating func controlLine(_ line: String, inRoomNamed name: String, at: WallTime, now: NodeTime) -> SendRefusal? {
        guard let room = joinedRoom(named: name) else { return .notInRoom(name) }
        let command: ConsoleCommand
        do {
            command = try ConsoleCommand(parsing: line)
        } catch {
            return .invalid("\(error)")
        }
        if case .notFrom(let face, let typed) = Self.refusal(of: command, from: .control) {
            return .consoleOnly(command: typed, face: face)
        }
        let current = currentRoom
        currentRoom = room
        answering(.control) { $0.run(command, at: at, now: now) }
        if currentRoom == room, let current, joined.contains(current) { currentRoom = current }
        return nil
    }

    /// What `face` may not run, and why: the page and the control socket stop no node (`/quit`)
    /// and pair no phone (`/web`: a phone pairs, lists or unpairs phones only where the viewer
    /// sits); the control socket types no passphrase (`/private`). `nil`: it may.
    public static func refusal(of command: ConsoleCommand, from face: Face) -> CommandProblem? {
        switch (command, face) {
        case (_, .console): nil
        case (.quit, _): .notFrom(face, command: "/quit")
        case (.web, _): .notFrom(face, command: "/web")
        case (.joinPrivate, .control): .notFrom(face, command: "/private")
        // A path names a file on the node's machine: a phone must not make the node read its files.
        case (.photo, .page): .notFrom(face, command: "/photo")
        case (.open, _): .notFrom(face, command: "/open")
        // Its checks take seconds, after the request's answer: `huddle doctor` is that face's.
        case (.doctor, .control): .notFrom(face, command: "/doctor")
        default: nil
        }
    }

    /// Marks `label` at `at`, creating the calibration event first if nobody has proposed it. A
    /// mark that would move the reader far (``WildMark``) is asked about first: made only when
    /// asked for again within ``WildMark/confirmWindow``, timed at the first press.
    mutating func mark(_ raw: String, in room: String, at: WallTime, now: NodeTime) {
        guard let label = CalibrationLabel(raw) else { return reject(.blankLabel) }
        var at = at
        let face = answering ?? .console
        if let asked = wildMarksAsked[face], asked.room == room, asked.label == label,
            now.wall < asked.askedAt + WildMark.confirmWindow
        {
            // Timed at the first press, as asked; said so, with when that was.
            say(.markedAtFirstPress(label: label.normalized, room: name(of: room), at: asked.at, ago: now.wall - asked.at))
            at = asked.at
            wildMarksAsked[face] = nil
        } else if let wild = rooms[room]?.wildMark(label, at: at) {
            wildMarksAsked[face] = (room, label, at, now.wall)
            let proposed = rooms[room]?.pendingMarks.proposedAt(label)
            return show(.confirmMark(wild, room: name(of: room), proposedAgo: proposed.map { at - $0 }))
        }
        if rooms[room]?.isProposed(label) != true {
            // Of the mark's moment, so that a reader it is held for gets the two in this order.
            originate(.calibrationEvent(label: label.normalized), in: room, at: at, now: now)
        }
        originate(.mark(label: label.normalized), in: room, at: at, now: now)
        tellOnceWhereNamesGo(label)
    }

    /// The first time this run the reader names a moment whose name could spoil, says where it
    /// goes (``NodeNotice/namedMoment(label:)``) and which names would do what it wants.
    mutating func tellOnceWhereNamesGo(_ label: CalibrationLabel) {
        guard !SpoilerFreeMoment.contains(label), !toldOfNamedMoments else { return }
        toldOfNamedMoments = true
        say(.namedMoment(label: label.normalized))
    }

    /// Takes back this node's mark of `label`: every node stops counting it.
    mutating func unmark(_ raw: String, in room: String, now: NodeTime) {
        guard let label = CalibrationLabel(raw) else { return reject(.blankLabel) }
        guard rooms[room]?.readerHasMarked(label) == true else {
            return reject(.noMarkToTakeBack(label: label.normalized, room: name(of: room)))
        }
        originate(.unmark(label: label.normalized), in: room, now: now)
    }

    /// Marks the moment the console offered when the key arrived (`nil`: it offered none); a
    /// tap on the page's Now names none, and marks the moment on offer now, as Enter does at the
    /// console.
    mutating func markOffered(_ label: String?, in room: String, at: WallTime, now: NodeTime) {
        guard let label = label ?? (answering == .page ? rooms[room]?.markOffer(now: now.wall)?.label.normalized : nil) else {
            return reject(.noMomentWaiting)
        }
        mark(label, in: room, at: at, now: now)
    }

    private mutating func inCurrentRoom(_ body: (inout NodeMachine, String) -> Void) {
        guard let room = currentRoom else { return reject(.noRoom) }
        body(&self, room)
    }

    // MARK: What the console shows

    /// What the interactive console shows under the conversation now: the status line, the
    /// room, the moment one key marks, and what Tab completes.
    public func consoleView(now: NodeTime) -> ConsoleView {
        let session = currentRoom.flatMap { rooms[$0] }
        var nicks: [String] = []
        var labels: [String] = []
        if let session {
            nicks = session.members.filter { $0.id != identity.id }.map(\.nick)
            labels = session.pendingMarks.labelsPendingFirst(now: now.wall).map(\.normalized)
        }
        var roomNames = joined.map(name(of:))
        for peer in membership.peers.values.sorted(by: { $0.id < $1.id }) where peer.state != .gone {
            // A private room is typed by name after /private, never by id.
            roomNames += peer.rooms.filter { !RoomKey.isPrivate($0) && !roomNames.contains($0) }
        }
        return ConsoleView(
            status: statusGlance(now: now), room: currentRoom.map(name(of:)), offer: session?.markOffer(now: now.wall),
            words: ConsoleCompletion.Words(rooms: roomNames, nicks: nicks, labels: labels))
    }

    /// What the status line under the conversation says, not yet in words.
    public func statusGlance(now: NodeTime) -> StatusGlance {
        let session = currentRoom.flatMap { rooms[$0] }
        return StatusGlance(
            room: session.map { glance(at: $0, label: privateLabel(of: $0.room)) }, pausedAt: pausedAt, now: now.wall)
    }

    /// What the console needs to know of one room to describe it.
    func glance(at session: RoomSession, label: String) -> RoomGlance {
        var view = RoomGlance(
            session: session, label: label, alivePeers: membership.alivePeers(inRoom: session.room).count,
            pausedAt: pausedAt, peerStates: membership.peers.mapValues(\.state))
        view.heardPeers = listening.map { $0.attempts.values.count { $0.heard != nil } }
        view.sharingSound = listening.map { $0.sharing.reason != .kept } ?? false
        view.showWaiting = showWaiting
        return view
    }

    /// `/who`: the room at a glance, as people name it.
    func who(in room: String) -> NodeNotice {
        .who(room: name(of: room), rooms[room].map { glance(at: $0, label: name(of: room)) })
    }

    /// `/rooms`: the reader's rooms, and those its peers are in.
    func roomsGlance() -> RoomsGlance {
        var seen: [String: [String]] = [:]
        for peer in membership.peers.values where peer.state != .gone {
            for room in peer.rooms { seen[room, default: []].append(peer.nick) }
        }
        return RoomsGlance(
            joined: joined.map { RoomsGlance.Joined(label: privateLabel(of: $0), current: $0 == currentRoom) },
            seen: seen.keys.sorted(by: { name(of: $0) < name(of: $1) }).map {
                RoomsGlance.Seen(label: privateLabel(of: $0), nicks: seen[$0]!.sorted())
            })
    }
}

/// What the interactive console shows under the conversation.
public struct ConsoleView: Equatable, Sendable {
    /// What the status line says, not yet in words.
    public var status: StatusGlance
    /// The current room, as people name it.
    public var room: String?
    /// The moment one key marks, and how many more wait after it.
    public var offer: PendingMarks.Offer?
    /// What Tab completes.
    public var words: ConsoleCompletion.Words

    public init(status: StatusGlance, room: String?, offer: PendingMarks.Offer?, words: ConsoleCompletion.Words) {
        self.status = status
        self.room = room
        self.offer = offer
        self.words = words
    }
}

/// Why `huddle send` wrote nothing.
public enum SendRefusal: Error, Equatable {
    /// The node is in no room people call that.
    case notInRoom(String)
    case empty
    /// The room refused the message (too long, or with control characters).
    case refused
    /// Not a command the console knows: why, in the grammar's words (``ConsoleCommandError``).
    case invalid(String)
    /// A command only the node's own console can run (``NodeMachine/refusal(of:from:)``).
    case consoleOnly(command: String, face: Face)
}
