import Foundation

/// A terminal switched to raw mode (no echo, no line buffering, no signals from keys) that is put
/// back exactly as it was on every way out: ``restore()`` on a normal stop, an `atexit` handler
/// for `exit()`, and handlers for the signals a crash raises (SIGSEGV, SIGILL, SIGTRAP, SIGABRT,
/// SIGBUS, SIGFPE, SIGQUIT), which restore the terminal and hand the signal on to whatever handled
/// it before (Swift's backtracer, or the default). A shell is never left in raw mode, except
/// after SIGKILL, which nothing can catch.
///
/// ```swift
/// let raw = try RawTerminal.enter(fileDescriptor: STDIN_FILENO)
/// defer { raw.restore() }
/// ```
final class RawTerminal: Sendable {
    let fileDescriptor: Int32

    private init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
    }

    /// Whether `fileDescriptor` is a terminal this process may take over: a tty whose foreground
    /// process group is ours (a node started with `&` must not fight the shell for it).
    static func canTakeOver(_ fileDescriptor: Int32) -> Bool {
        isatty(fileDescriptor) != 0 && tcgetpgrp(fileDescriptor) == getpgrp()
    }

    /// Saves the terminal's settings and switches it to raw mode.
    static func enter(fileDescriptor: Int32) throws -> RawTerminal {
        var original = termios()
        guard tcgetattr(fileDescriptor, &original) == 0 else { throw RawTerminalError.notATerminal(errno: errno) }
        SavedTerminal.remember(original, fileDescriptor: fileDescriptor)
        let terminal = RawTerminal(fileDescriptor: fileDescriptor)
        do {
            try terminal.makeRaw()
        } catch {
            SavedTerminal.restore()
            throw error
        }
        return terminal
    }

    /// Switches to raw mode again after ``restore()`` (a Ctrl-Z, then `fg`).
    func resume() throws {
        SavedTerminal.active = true
        try makeRaw()
    }

    private func makeRaw() throws {
        var raw = SavedTerminal.settings
        // Keys arrive one by one and unechoed; Ctrl-C, Ctrl-Z, Ctrl-S and Ctrl-V reach the editor as
        // bytes; CR stays CR. Output processing (LF → CR LF) stays on.
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL | INLCR | IGNCR | ISTRIP | BRKINT)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(fileDescriptor, TCSAFLUSH, &raw) == 0 else { throw RawTerminalError.cannotSet(errno: errno) }
    }

    /// Puts the terminal back as it was before ``enter(fileDescriptor:)``.
    func restore() {
        SavedTerminal.restore()
    }

    /// Columns of the terminal, or `nil` if it does not say.
    static func columns(of fileDescriptor: Int32) -> Int? {
        var size = winsize()
        let result = withUnsafeMutablePointer(to: &size) { ioctl(fileDescriptor, UInt(TIOCGWINSZ), $0) }
        guard result == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }
}

/// Why the terminal could not be switched to raw mode.
enum RawTerminalError: Error, CustomStringConvertible {
    case notATerminal(errno: Int32)
    case cannotSet(errno: Int32)
    case noWakePipe

    var description: String {
        switch self {
        case .noWakePipe: "could not make a pipe for the console's key reader (too many open files?)"
        case .notATerminal(let code): "stdin is not a terminal (\(String(cString: strerror(code))))"
        case .cannotSet(let code): "could not set the terminal to raw mode (\(String(cString: strerror(code))))"
        }
    }
}

/// The terminal settings to put back, where a signal handler can reach them.
///
/// Signal handlers may call only async-signal-safe functions (`tcsetattr`, `write`, `sigaction`)
/// and may not take locks, so this is plain global memory: written before any handler that reads
/// it is installed, and read-only afterwards except for the `active` flag, which only changes from
/// true to false.
private enum SavedTerminal {
    nonisolated(unsafe) static var settings = termios()
    nonisolated(unsafe) static var fileDescriptor: Int32 = -1
    nonisolated(unsafe) static var active = false
    nonisolated(unsafe) static var handlersInstalled = false
    /// The handlers that were in place before ours, by signal number.
    nonisolated(unsafe) static var previous: [sigaction] = Array(repeating: sigaction(), count: 65)

    static let crashSignals: [Int32] = [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE, SIGQUIT]

    static func remember(_ original: termios, fileDescriptor: Int32) {
        settings = original
        self.fileDescriptor = fileDescriptor
        active = true
        guard !handlersInstalled else { return }
        handlersInstalled = true
        atexit { SavedTerminal.restore() }
        for signal in crashSignals {
            var action = sigaction()
            #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = { signal in SavedTerminal.restoreFromSignal(signal) }
            #else
            action.__sigaction_u.__sa_handler = { signal in SavedTerminal.restoreFromSignal(signal) }
            #endif
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            sigaction(signal, &action, &previous[Int(signal)])
        }
    }

    /// Puts the terminal back, once.
    static func restore() {
        guard active else { return }
        active = false
        var settings = settings
        tcsetattr(fileDescriptor, TCSAFLUSH, &settings)
    }

    /// In a crash: restore the terminal, reinstall the previous handler and raise the signal
    /// again; it is delivered to that handler as soon as this one returns (and a fault would
    /// happen again anyway), so the crash goes where it went before.
    static func restoreFromSignal(_ signal: Int32) {
        if active {
            active = false
            var settings = settings
            tcsetattr(fileDescriptor, TCSANOW, &settings)
            let reset: [UInt8] = Array("\r\n\u{1b}[?2004l\u{1b}[0m".utf8)
            _ = reset.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
        }
        sigaction(signal, &previous[Int(signal)], nil)
        raise(signal)
    }
}
