import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How ``ServiceDiscovery`` talks to its loop thread: commands in a locked queue, and a
/// non-blocking pipe whose read end the loop polls next to its dns_sd sockets, so a command
/// wakes it at once.
final class DiscoveryMailbox: Sendable {
    enum Command: Sendable {
        /// Advertise these rooms from now on.
        case updateRooms([String])
        /// Send the goodbye, free every ref, finish the stream and end the thread.
        case stop
    }

    /// The end the loop polls.
    let wakeReadFD: Int32
    private let wakeWriteFD: Int32
    private let commands = Mutex<[Command]>([])

    /// `nil` if the process is out of file descriptors.
    init?() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        wakeReadFD = fds[0]
        wakeWriteFD = fds[1]
    }

    deinit {
        close(wakeReadFD)
        close(wakeWriteFD)
    }

    /// Queues a command and wakes the loop.
    func post(_ command: Command) {
        commands.withLock { $0.append(command) }
        var byte: UInt8 = 1
        // A full pipe already holds a wake-up; nothing else can fail that matters.
        _ = write(wakeWriteFD, &byte, 1)
    }

    /// The commands posted so far, oldest first; the wake-up bytes are drained as well.
    func take() -> [Command] {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(wakeReadFD, &buffer, buffer.count) > 0 {}
        return commands.withLock { queued in
            defer { queued = [] }
            return queued
        }
    }
}
