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
            if case .lines = input {} else { await finishPipedTurn() }
            switch input {
            case .line(let line, let at):
                if !(await lineArrived(line, at: at)) { return false }
            case .lines(let lines, let at):
                if !(await linesArrived(lines, at: at)) { return false }
            case .secret(let passphrase):
                await passphraseEntered(passphrase)
            case .secretCancelled:
                await passphraseEntered(nil)
            case .tooLong(let bytes):
                showError("ignored a line of \(bytes) bytes (at most \(StandardInputLines.maximumLineBytes))")
            case .markOffered(let label, let at):
                await feed(.markOffered(label, at: at))
            case .pause(let at):
                await feed(.pause(at: at))
            case .resume(let at):
                await feed(.resume(at: at))
            case .quit:
                return false
            }
        }
        await finishPipedTurn()
        return !Task.isCancelled
    }
}

extension Node {
    /// A line the viewer entered at `at` (the console's, or a paired page's); returns `false` for
    /// `/quit`. While a passphrase is asked for (piped stdin, after `/private`), a console's line
    /// is that; a page answers with its own message, never with a chat line.
    @discardableResult
    func lineArrived(_ line: String, at: WallTime, from face: Face = .console) async -> Bool {
        if face == .console, machine.passphraseWanted != nil {
            await passphraseEntered(line)
            return true
        }
        // A line longer than one message goes as numbered parts, as a long paste does on the
        // interactive console. Counted as it will be sent: a pasted line break is one byte on
        // the console's line and three in the message (U+2028).
        if LongLine.flattened(line).utf8.count > MessageBudget.limit {
            switch LongLine.plan(line) {
            case .send(let parts):
                for part in parts where !(await runConsoleLine(part, at: at, from: face)) { return false }
            case .refuse(let why):
                showError("\(why): not sent")
            }
            return true
        }
        return await runConsoleLine(line, at: at, from: face)
    }

    /// Lines piped in together at `at`; returns `false` at a `/quit`. Each run of chat lines goes
    /// to the machine in one turn, so their events share one commit: a pipe's burst waits for
    /// the disk once, not once a line (2.4-2.9k lines a second before). A command, a line longer
    /// than one message, or a line while a passphrase is asked for goes alone, in its place,
    /// once every line before it is shown.
    ///
    /// A run does not wait for its own commit, only for the run before's: the store commits one
    /// run and the node shows it while the next is signed, on two cores at once. Nothing of a
    /// run is sent or shown before its commit (the machine's ``CommitGate``), and the writer
    /// commits in the order handed over.
    func linesArrived(_ lines: [String], at: WallTime) async -> Bool {
        var chat: [String] = []
        for line in lines {
            if machine.passphraseWanted == nil, Self.isChat(line) {
                chat.append(line)
                continue
            }
            await sayInOneTurn(chat, at: at)
            chat = []
            await finishPipedTurn()
            if !(await lineArrived(line, at: at)) { return false }
        }
        await sayInOneTurn(chat, at: at)
        return !run.quitRequested
    }

    /// A line that is only a message of its own: not a command (by the parser's rule: its first
    /// character past blanks is not `/`), not blank, and within one message.
    static func isChat(_ line: String) -> Bool {
        let trimmed = line.trimmingWhitespace()
        return !trimmed.isEmpty && !trimmed.hasPrefix("/") && LongLine.flattened(line).utf8.count <= MessageBudget.limit
    }

    private func sayInOneTurn(_ lines: [String], at: WallTime) async {
        guard !lines.isEmpty else { return }
        let (_, turn) = started { machine, now in
            for line in lines { machine.handle(.consoleLine(line, at: at), now: now) }
        }
        await finishPipedTurn()
        run.pipedTurn = turn
    }

    /// Returns once the last run of piped chat lines is committed and shown.
    func finishPipedTurn() async {
        guard let turn = run.pipedTurn else { return }
        run.pipedTurn = nil
        await done(turn)
    }

    /// Runs one console line whose Enter arrived at `at`; returns `false` for `/quit`. A bad line
    /// prints an error and changes nothing.
    func runConsoleLine(_ line: String, at: WallTime, from face: Face = .console) async -> Bool {
        await feed(.consoleLine(line, at: at, from: face))
        return !run.quitRequested
    }
}
