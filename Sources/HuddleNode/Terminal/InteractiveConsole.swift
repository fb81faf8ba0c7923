import Dispatch
import Foundation
import HuddleCore
import Synchronization

/// The console on a terminal: chat scrolls by above a status line and an input line that incoming
/// lines never break, with line editing, history, Tab completion and one-key marks.
///
/// It owns the terminal while it runs: raw mode from ``start()`` to ``stop()`` (and back to normal
/// on every way out, see ``RawTerminal``), one reader thread that turns keys into edits, and a lock
/// that orders everything drawn on the screen: lines from the node (``write(_:)``), the footer it
/// updates (``update(_:)``) and the keys' echo. The bytes go out through an ``AsyncFileWriter``,
/// so a terminal that stops reading never stalls the node. What the user submits comes out of
/// ``inputs``, each with the time its key arrived.
///
/// The node never waits for the console: what it hands over (lines, the footer, a hidden
/// prompt) is queued and drawn on a queue of the console's own, so a key being applied under the
/// lock (a 64 KiB paste) cannot hold up the actor that answers peers' probes.
///
/// Keys, beyond line editing (see ``LineEditor``): Enter sends the line; Enter on an empty line
/// marks the moment the prompt offers (`[Enter = kickoff]`); Ctrl-T marks it while a line is being
/// typed, which stays; Tab completes; Ctrl-L redraws; Ctrl-Z suspends; Ctrl-C clears a
/// half-typed line; Ctrl-C or Ctrl-D on an empty line quits.
///
/// Why not libedit: a probe showed it can redraw its line after output printed above it
/// (`EL_UNBUFFERED`, erase, `EL_REFRESH`), but the erasing, the wrapped-row and width arithmetic
/// stay the caller's, its readline layer gets this wrong (`rl_replace_line` does nothing,
/// `rl_redisplay` queues a ^R), and it has no footer, no bracketed paste and no key timestamps.
/// What is left to write is small and, here, pure and tested byte by byte.
public final class InteractiveConsole: LineOutput {
    /// The keys, as `/help` lists them on the interactive console.
    public static let keysHelp = """
        Keys:
          Enter on an empty line   mark the moment the prompt offers ([Enter = LABEL])
          Ctrl-T                   mark it while you type (your line stays)
          Ctrl-S / Ctrl-Q          your stream paused / plays again (as /pause and /resume)
          Tab                      complete commands, rooms, labels and nicks (twice: list them)
          Up / Down                your earlier lines (kept across restarts)
          Left/Right, Home/End, Ctrl-A/E, Alt-B/F, Ctrl-Left/Right   move
          Backspace/Delete, Ctrl-U/K/W, Alt-D, Alt-Backspace, Ctrl-Y   delete and yank
          Ctrl-C           clear the line (Ctrl-Y brings it back); on an empty line, quit (Ctrl-D too)
          Ctrl-L redraw   Ctrl-Z suspend (fg to return)
        A line holds one message, 4,096 bytes; the status line counts them from 3,072 (3,900/4,096).
        A longer paste is offered as numbered messages, (1/3) (2/3) (3/3): Enter sends them, Esc
        puts the paste away; a paste over 64 KiB is refused.
        """

    /// Submitted lines, marks and quits; finishes when the console stops.
    let inputs: AsyncStream<ConsoleInput>
    private let continuation: AsyncStream<ConsoleInput>.Continuation

    private struct State: ~Copyable {
        var session: ConsoleSession
        var raw: RawTerminal?
        var started = false
        var stopped = false
        var resize: (any DispatchSourceSignal)?
    }

    private let state: Mutex<State>
    private let input: Int32
    private let output: Int32
    private let history: InputHistoryFile?
    private let screen: AsyncFileWriter
    /// Written to once to stop the reader thread.
    private let wakePipe: (read: Int32, write: Int32)
    private let readerDone = DispatchSemaphore(value: 0)
    private let clock = SystemClock()
    /// Where the node's lines and footer updates wait their turn for the lock, in order.
    private let fromNode = DispatchQueue(label: "huddle-console-draw")

    /// Whether stdin and stdout are both a terminal this process may take over.
    public static var isAvailable: Bool {
        RawTerminal.canTakeOver(STDIN_FILENO) && isatty(STDOUT_FILENO) != 0
    }

    /// A console on stdin and stdout. History is kept in `historyDirectory` (the data dir) if given.
    public init(historyDirectory: String?, colors: Bool) {
        input = STDIN_FILENO
        output = STDOUT_FILENO
        history = historyDirectory.map { InputHistoryFile(directory: $0) }
        screen = AsyncFileWriter(fileDescriptor: STDOUT_FILENO)
        let columns = RawTerminal.columns(of: STDOUT_FILENO) ?? 80
        state = Mutex(State(session: ConsoleSession(
            columns: columns, colors: colors, history: InputHistory(entries: history?.load() ?? []))))
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) != 0 { fds = [-1, -1] }
        wakePipe = (fds[0], fds[1])
        (inputs, continuation) = AsyncStream.makeStream(of: ConsoleInput.self)
    }

    deinit {
        close(wakePipe.read)
        close(wakePipe.write)
    }

    // MARK: Lifecycle

    /// Takes over the terminal: raw mode, the footer, the key reader, redraw on resize.
    public func start() throws {
        // Without its wake-up pipe the key reader could never be stopped.
        guard wakePipe.read >= 0 else { throw RawTerminalError.noWakePipe }
        try state.withLock { state in
            guard !state.started else { return }
            state.raw = try RawTerminal.enter(fileDescriptor: input)
            state.started = true
            draw(state.session.begin())
            // SIGWINCH must be ignored for a dispatch source to see it (it is by default).
            signal(SIGWINCH, SIG_IGN)
            let resize = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: .global())
            resize.setEventHandler { [weak self] in self?.resized() }
            resize.resume()
            state.resize = resize
        }
        let reader = Thread { [self] in
            readKeys()
            readerDone.signal()
        }
        reader.name = "huddle-console"
        reader.start()
    }

    /// Gives the terminal back as it was: footer erased, cursor on a fresh line, cooked mode.
    /// Safe to call more than once, and before ``start()``.
    public func stop() {
        let wasRunning = state.withLock { state in
            defer { state.stopped = true }
            return state.started && !state.stopped
        }
        guard wasRunning else { return continuation.finish() }
        fromNode.sync {}  // the node's last lines, drawn before the footer goes
        var byte: UInt8 = 1
        _ = Foundation.write(wakePipe.write, &byte, 1)
        readerDone.wait()
        state.withLock { state in
            state.resize?.cancel()
            draw(state.session.end())
            screen.flush(timeout: .seconds(2))
            state.raw?.restore()
        }
        continuation.finish()
    }

    // MARK: From the node

    /// Prints a line above the footer (queued: returns at once).
    public func write(_ text: String) {
        write(rendering: { text })
    }

    /// Renders on the console's queue, in the order written.
    public func write(rendering render: @escaping @Sendable () -> String?) {
        fromNode.async { [self] in
            guard let text = render() else { return }
            state.withLock { state in draw(state.session.print(text)) }
        }
    }

    /// Waits until everything drawn is on the terminal, or `timeout` passes.
    public func flush(timeout: Duration) {
        fromNode.sync {}
        screen.flush(timeout: timeout)
    }

    /// Shows the node's state in the footer and tells the keys what they offer and complete
    /// (queued: returns at once).
    public func update(_ context: ConsoleContext) {
        fromNode.async { [self] in state.withLock { state in draw(state.session.update(context)) } }
    }

    /// Asks a question at a hidden prompt: what is typed next is not shown and not kept in
    /// history; it comes out of ``inputs`` as ``ConsoleInput/secret(_:)`` (or
    /// ``ConsoleInput/secretCancelled``).
    public func askSecret(_ question: String) {
        fromNode.async { [self] in state.withLock { state in draw(state.session.askSecret(question)) } }
    }

    /// Takes the hidden prompt down: its question was answered elsewhere (on a paired page).
    public func withdrawSecret() {
        fromNode.async { [self] in state.withLock { state in draw(state.session.withdrawSecret()) } }
    }

    /// A log line: above the footer while the console runs, on stderr otherwise.
    public func log(_ text: String) {
        fromNode.async { [self] in logNow(text) }
    }

    private func logNow(_ text: String) {
        state.withLock { state in
            if state.session.screen.isDrawn {
                draw(state.session.print(state.session.screen.colors ? "\u{1b}[2m\(text)\u{1b}[0m" : text))
            } else {
                _ = writeAll(Array((text + "\n").utf8), to: STDERR_FILENO)
            }
        }
    }

    // MARK: Keys

    /// The reader thread: waits for keys (or the stop signal), decodes them and applies them. A
    /// lone Escape is told from the start of a sequence by 50 ms of silence.
    private func readKeys() {
        // Ctrl-Z stops the process from this thread (see `suspend()`), which the thread that
        // started it may have passed on blocked.
        var stopSignal = sigset_t()
        sigemptyset(&stopSignal)
        sigaddset(&stopSignal, SIGTSTP)
        pthread_sigmask(SIG_UNBLOCK, &stopSignal, nil)
        var decoder = KeyDecoder()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var descriptors = [
            pollfd(fd: input, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let ready = poll(&descriptors, 2, decoder.isWaiting ? 50 : -1)
            if ready < 0 {
                if errno == EINTR { continue }
                continuation.yield(.quit)
                return
            }
            if descriptors[1].revents != 0 { return }
            if ready == 0 {
                guard apply(decoder.flush(), at: clock.wall()) else { return }
                continue
            }
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            // The time the key arrived, taken before anything else happens to it.
            let at = clock.wall()
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count > 0 else {  // the terminal went away
                continuation.yield(.quit)
                return
            }
            guard apply(decoder.feed(buffer[..<count]), at: at) else { return }
        }
    }

    /// Applies keys that arrived at `at`; `false` once they asked to quit.
    private func apply(_ keys: [TerminalKey], at: WallTime) -> Bool {
        var pending = keys[...]
        while !pending.isEmpty {
            let reaction = state.withLock { state in
                let reaction = state.session.handle(Array(pending), at: at)
                draw(reaction.output)
                return reaction
            }
            for line in reaction.submitted { history?.append(line) }
            for input in reaction.inputs { continuation.yield(input) }
            if reaction.quit { return false }
            guard reaction.suspend else { return true }
            suspend()
            // Keys typed together with Ctrl-Z come after the `fg`.
            pending = pending.drop { $0 != .control("z") }.dropFirst()
        }
        return true
    }

    /// Ctrl-Z: give the terminal back, stop the job as the shell's Ctrl-Z would, and take the
    /// terminal again after `fg`.
    private func suspend() {
        state.withLock { state in
            draw(state.session.end())
            screen.flush(timeout: .seconds(2))
            state.raw?.restore()
        }
        // Sent to this thread, not the process: the stop then takes this thread before the call
        // returns, so nothing below runs until `fg`. (`kill(0, SIGTSTP)` may be taken by another
        // thread and returned at once, and the terminal went raw again under the shell.) If the
        // stop is refused (an orphaned process group has no shell to return to), it returns at once.
        pthread_kill(pthread_self(), SIGTSTP)
        state.withLock { state in
            guard !state.stopped else { return }
            try? state.raw?.resume()
            draw(state.session.begin())
        }
    }

    private func resized() {
        guard let columns = RawTerminal.columns(of: output) else { return }
        state.withLock { state in draw(state.session.resize(columns: columns)) }
    }

    /// Queues bytes for the terminal; called with the lock held, so draws keep their order.
    private func draw(_ text: String) {
        guard !text.isEmpty else { return }
        screen.enqueue(Array(text.utf8))
    }
}
