import HuddleCore

extension Node {
    /// Reads the console until `/quit`, Ctrl-C or Ctrl-D, or the end of stdin: the interactive
    /// console's keys, or lines of stdin. Returns `true` when the input ended (rather than
    /// being quit).
    @discardableResult
    func consoleLoop(interactive: Bool) async -> Bool {
        let inputs = interactive ? console?.inputs : nil
        for await input in inputs ?? StandardInputLines.stream() {
            guard !Task.isCancelled else { return false }
            switch input {
            case .line(let line, let at):
                // Piped stdin: the line after /private is its passphrase.
                if passphraseWanted != nil {
                    await passphraseEntered(line)
                    continue
                }
                // A piped line longer than one message goes as numbered parts, as a long paste
                // does on the interactive console (which never hands over a line that long).
                if line.utf8.count > MessageBudget.limit {
                    switch LongLine.plan(line) {
                    case .send(let parts):
                        for part in parts where !runConsoleLine(part, at: at) { return false }
                    case .refuse(let why):
                        showError("\(why): not sent")
                    }
                    continue
                }
                if !runConsoleLine(line, at: at) { return false }
            case .secret(let passphrase):
                await passphraseEntered(passphrase)
            case .secretCancelled:
                await passphraseEntered(nil)
            case .tooLong(let bytes):
                showError("ignored a line of \(bytes) bytes (at most \(StandardInputLines.maximumLineBytes))")
            case .markOffered(let label, let at):
                inCurrentRoom { room in markOffered(label, in: room, at: at) }
            case .pause(let at):
                pause(at: at)
            case .resume(let at):
                resume(at: at)
            case .quit:
                return false
            }
        }
        return !Task.isCancelled
    }

    /// Runs one console line whose Enter arrived at `at`; returns `false` for `/quit`. A bad line
    /// prints an error and changes nothing.
    func runConsoleLine(_ line: String, at: Int64) -> Bool {
        let command: ConsoleCommand
        do {
            command = try ConsoleCommand(parsing: line)
        } catch .emptyLine {
            return true
        } catch {
            showError("\(error)")
            return true
        }
        switch command {
        case .quit:
            return false
        case .help:
            showInfo(ConsoleCommand.helpText + (console != nil ? "\n" + InteractiveConsole.keysHelp : ""))
        case .join(let room):
            join(room)
        case .joinPrivate(let room):
            askPassphrase(for: room)
        case .direct(let target, let text):
            if case .failure(let problem) = sendDirect(to: target, text: text), problem != .notSent {
                showError(problem.description)
            }
        case .pause:
            pause(at: at)
        case .resume:
            resume(at: at)
        case .status:
            showInfo(statusLine(session: currentRoom.flatMap { rooms[$0] }, now: clock.wallMillis()))
        case .score(let home, let guest):
            // Timed at the Enter, like a mark: the score is of that moment of the stream.
            inCurrentRoom { originate(.score(home: home, guest: guest), in: $0, at: at) }
        case .teams(let home, let guest):
            inCurrentRoom { originate(.teams(home: home, guest: guest), in: $0) }
        case .rooms:
            showInfo(roomsDescription())
        case .say(let text):
            inCurrentRoom { originate(.chat(text: text), in: $0) }
        case .leave:
            inCurrentRoom { leave($0) }
        case .who:
            inCurrentRoom { showInfo(whoDescription(room: $0)) }
        case .event(let label):
            inCurrentRoom { room in
                guard let label = CalibrationLabel(label) else { return showError("a label cannot be blank") }
                originate(.calibrationEvent(label: label.normalized), in: room)
            }
        case .now(let label?):
            inCurrentRoom { room in mark(label, in: room, at: at) }
        case .now(nil):
            inCurrentRoom { room in markOffered(rooms[room]?.markOffer(now: at)?.label.normalized, in: room, at: at) }
        case .ignore(let label):
            inCurrentRoom { room in
                guard let label = CalibrationLabel(label) else { return showError("a label cannot be blank") }
                rooms[room]?.ignore(label: label)
                showNotice("you will not be asked to mark \"\(label)\" in \(name(of: room))")
                refreshConsole()
            }
        case .unmark(let label):
            inCurrentRoom { room in unmark(label, in: room) }
        case .delay(let milliseconds):
            inCurrentRoom { originate(.delayNudge(milliseconds: milliseconds), in: $0) }
        case .history(let count):
            inCurrentRoom { room in
                guard let session = rooms[room] else { return }
                let events = session.history(last: count)
                if events.isEmpty { return showInfo("no messages in \(name(of: room)) yet") }
                for event in events {
                    show(renderer.history(event, from: session.member(event.origin),
                                          gameTime: session.calibration.gameTime(of: event), room: name(of: room)))
                }
            }
        }
        return true
    }

    /// Marks `label` at `at`, creating the calibration event first if nobody has proposed it.
    private func mark(_ raw: String, in room: String, at: Int64) {
        guard let label = CalibrationLabel(raw) else { return showError("a label cannot be blank") }
        if rooms[room]?.labels.contains(label) != true {
            originate(.calibrationEvent(label: label.normalized), in: room)
        }
        originate(.mark(label: label.normalized), in: room, at: at)
    }

    /// Takes back this node's mark of `label`: every node stops counting it.
    private func unmark(_ raw: String, in room: String) {
        guard let label = CalibrationLabel(raw) else { return showError("a label cannot be blank") }
        guard rooms[room]?.readerHasMarked(label) == true else {
            return showError("you have no mark of \"\(label.normalized)\" in \(name(of: room)) to take back")
        }
        originate(.unmark(label: label.normalized), in: room)
    }

    /// Marks the moment the console offered when the key arrived (`nil`: it offered none).
    private func markOffered(_ label: String?, in room: String, at: Int64) {
        guard let label else {
            return showError("no moment is waiting for your mark; /now LABEL marks a new one")
        }
        mark(label, in: room, at: at)
    }

    // MARK: The interactive console's footer

    /// Tells the interactive console (if any) what its status line, prompt and Tab show now.
    func refreshConsole() {
        guard let console else { return }
        let now = clock.wallMillis()
        let session = currentRoom.flatMap { rooms[$0] }
        var nicks: [String] = []
        var labels: [String] = []
        if let session {
            nicks = session.members.filter { $0.id != identity.id }.map(\.nick)
            labels = session.pendingMarks.labelsPendingFirst(now: now).map(\.normalized)
        }
        var roomNames = joined.map(name(of:))
        for peer in membership.peers.values where peer.state != .gone {
            // A private room is typed by name after /private, never by id.
            roomNames += peer.rooms.filter { !RoomKey.isPrivate($0) && !roomNames.contains($0) }
        }
        console.update(ConsoleContext(
            status: statusLine(session: session, now: now), room: currentRoom.map(name(of:)),
            offer: session?.markOffer(now: now),
            words: ConsoleCompletion.Words(rooms: roomNames, nicks: nicks, labels: labels)))
    }

    /// The status line under the conversation (see ``RoomGlance/statusLine(of:pausedAt:now:)``).
    func statusLine(session: RoomSession?, now: Int64) -> String {
        RoomGlance.statusLine(of: session.map { glance(at: $0, label: privateLabel(of: $0.room)) }, pausedAt: pausedAt, now: now)
    }

    /// What the console needs to know of one room to describe it.
    private func glance(at session: RoomSession, label: String) -> RoomGlance.View {
        RoomGlance.View(
            session: session, label: label, alivePeers: membership.alivePeers(inRoom: session.room).count,
            pausedAt: pausedAt, peerStates: membership.peers.mapValues(\.state))
    }

    private func inCurrentRoom(_ body: (String) -> Void) {
        guard let room = currentRoom else { return showError("you are not in a room: /join ROOM first") }
        body(room)
    }

    private func roomsDescription() -> String {
        func described(_ room: String) -> String {
            privateLabel(of: room) + (room == currentRoom ? " (current)" : "")
        }
        var lines = ["your rooms: " + (joined.isEmpty ? "none" : joined.map(described).joined(separator: ", "))]
        var seen: [String: [String]] = [:]
        for peer in membership.peers.values where peer.state != .gone {
            for room in peer.rooms { seen[room, default: []].append(peer.nick) }
        }
        if seen.isEmpty {
            lines.append("no rooms seen on the network yet")
        } else {
            for room in seen.keys.sorted(by: { name(of: $0) < name(of: $1) }) {
                lines.append("  \(privateLabel(of: room)): \(seen[room]!.sorted().joined(separator: ", "))")
            }
        }
        return lines.joined(separator: "\n")
    }

    private func whoDescription(room: String) -> String {
        guard let session = rooms[room] else { return "nobody in \(name(of: room))" }
        return RoomGlance.who(in: glance(at: session, label: name(of: room)))
    }
}
