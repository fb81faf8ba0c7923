import HuddleCore

extension Node {
    /// Reads console lines until `/quit` or the end of stdin.
    func consoleLoop() async {
        for await input in StandardInputLines.stream() {
            guard !Task.isCancelled else { return }
            switch input {
            case .line(let line):
                if !runConsoleLine(line) { return }
            case .tooLong(let bytes):
                showError("ignored a line of \(bytes) bytes (at most \(StandardInputLines.maximumLineBytes))")
            }
        }
    }

    /// Runs one console line; returns `false` for `/quit`. A bad line prints an error and
    /// changes nothing.
    func runConsoleLine(_ line: String) -> Bool {
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
            showInfo(ConsoleCommand.helpText)
        case .join(let room):
            join(room)
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
        case .now(let label):
            inCurrentRoom { room in mark(label, in: room) }
        case .ignore(let label):
            inCurrentRoom { room in
                guard let label = CalibrationLabel(label) else { return showError("a label cannot be blank") }
                rooms[room]?.ignore(label: label)
                showInfo("you will not be asked to mark \"\(label)\" in \(room)")
            }
        case .delay(let milliseconds):
            inCurrentRoom { originate(.delayNudge(milliseconds: milliseconds), in: $0) }
        case .history(let count):
            inCurrentRoom { room in
                guard let session = rooms[room] else { return }
                let events = session.history(last: count)
                if events.isEmpty { return showInfo("no messages in \(room) yet") }
                for event in events {
                    show(renderer.history(event, nick: session.member(event.origin).nick,
                                          gameTime: session.calibration.gameTime(of: event), room: room))
                }
            }
        }
        return true
    }

    /// Marks `label` now, creating the calibration event first if nobody has proposed it.
    private func mark(_ raw: String, in room: String) {
        guard let label = CalibrationLabel(raw) else { return showError("a label cannot be blank") }
        if rooms[room]?.labels.contains(label) != true {
            originate(.calibrationEvent(label: label.normalized), in: room)
        }
        originate(.mark(label: label.normalized), in: room)
    }

    private func inCurrentRoom(_ body: (String) -> Void) {
        guard let room = currentRoom else { return showError("you are not in a room: /join ROOM first") }
        body(room)
    }

    private func roomsDescription() -> String {
        var lines = ["your rooms: " + (joined.isEmpty ? "none" : joined.map { $0 == currentRoom ? "\($0) (current)" : $0 }.joined(separator: ", "))]
        var seen: [String: [String]] = [:]
        for peer in membership.peers.values where peer.state != .gone {
            for room in peer.rooms { seen[room, default: []].append(peer.nick) }
        }
        if seen.isEmpty {
            lines.append("no rooms seen on the network yet")
        } else {
            for room in seen.keys.sorted() {
                lines.append("  \(room): \(seen[room]!.sorted().joined(separator: ", "))")
            }
        }
        return lines.joined(separator: "\n")
    }

    private func whoDescription(room: String) -> String {
        guard let session = rooms[room] else { return "nobody in \(room)" }
        var lines = ["in \(room):"]
        for entry in session.offsetReport.entries {
            let name = entry.member.id == identity.id ? "\(entry.member.nick) (you)" : entry.member.nick
            let standing: String
            if entry.member.id == identity.id {
                standing = session.calibration.isCalibrated(identity.id) ? "calibrated" : "not calibrated yet"
            } else if let behind = entry.behindReader {
                standing = OutputRenderer.describeLag(nick: nil, behindReader: behind)
            } else {
                standing = "not calibrated with you yet"
            }
            let state = membership.peers[entry.member.id].map { " [\($0.state)]" } ?? ""
            lines.append("  \(name): \(standing)\(state)")
        }
        return lines.joined(separator: "\n")
    }
}
