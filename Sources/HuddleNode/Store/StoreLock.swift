import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock` on `<dataDir>/huddle.lock`, held by a read-write ``HuddleStore`` so that
/// only one node uses a data directory at a time. The kernel drops it when the process dies,
/// however it dies, so a node restarted after `kill -9` gets it at once.
final class StoreLock: Sendable {
    /// The lock file's name in the data dir.
    static let fileName = "huddle.lock"

    /// The descriptor holding the lock; `nil` once released.
    private let fd: Mutex<Int32?>

    /// Takes the lock, creating the lock file (mode 0600) if needed.
    /// - Throws: ``StoreError/inUse(directory:)`` if another store holds it.
    init(directory: String) throws(StoreError) {
        let path = directory + "/" + Self.fileName
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .notWritable(path: path, reason: StoreFiles.describe(errno)) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let error = errno
            close(fd)
            if error == EWOULDBLOCK { throw .inUse(directory: directory) }
            throw .notWritable(path: path, reason: "cannot lock it: \(StoreFiles.describe(error))")
        }
        self.fd = Mutex(fd)
    }

    /// Releases the lock; later calls do nothing.
    func release() {
        fd.withLock { fd in
            if let held = fd { close(held) }
            fd = nil
        }
    }

    deinit {
        release()
    }
}
