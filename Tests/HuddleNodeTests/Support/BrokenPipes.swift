import Foundation

/// Writes to a closed pipe or socket fail with EPIPE in the tests, as they do in `huddle run`
/// (which ignores SIGPIPE), instead of killing the whole test process: every test target runs
/// in one process, and a socket test that closes a connection mid-write would take all of them.
enum BrokenPipes {
    static let ignored: Void = {
        _ = signal(SIGPIPE, SIG_IGN)
    }()
}
