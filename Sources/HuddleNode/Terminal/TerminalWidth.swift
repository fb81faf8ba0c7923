#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How wide the terminal a command prints to is, so tables fit it (`huddle status`).
public enum TerminalWidth {
    /// Columns of the terminal on standard output; `nil` when it is not a terminal (a pipe, a
    /// file: scripts get whole lines).
    public static func ofStandardOutput() -> Int? {
        isatty(STDOUT_FILENO) == 1 ? RawTerminal.columns(of: STDOUT_FILENO) : nil
    }
}
