#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The file-system side of opening a store: the data directory (0700), the database file (0600)
/// and the checks that turn `errno` into a ``StoreError`` naming the path.
enum StoreFiles {
    /// Creates `path` and any missing parents with mode 0700. An existing directory is left as it
    /// is (its mode is the owner's choice); anything else in the way is an error.
    static func makeDirectory(_ path: String) throws(StoreError) {
        if isDirectory(path) { return }
        if mkdir(path, 0o700) == 0 {
            _ = chmod(path, 0o700)  // in case the umask took bits away from the owner
            return
        }
        let error = errno
        switch error {
        case EEXIST where isDirectory(path):
            return
        case EEXIST:
            throw .cannotCreateDirectory(path: path, reason: "a file that is not a directory is in the way")
        case ENOENT:
            let parent = parentDirectory(of: path)
            guard parent != path else { throw .cannotCreateDirectory(path: path, reason: describe(error)) }
            try makeDirectory(parent)
            try makeDirectory(path)
        default:
            throw .cannotCreateDirectory(path: path, reason: describe(error))
        }
    }

    /// Creates an empty file with mode 0600 if nothing is at `path` yet. Whoever gets there
    /// first wins; the loser finds the file.
    static func createPrivateFile(_ path: String) throws(StoreError) {
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 {
            close(fd)
            return
        }
        let error = errno
        if error != EEXIST { throw .notWritable(path: path, reason: describe(error)) }
    }

    /// Sets mode 0600 on `path` if it exists with any other permission bits.
    static func restrictToOwner(_ path: String) throws(StoreError) {
        guard let mode = permissions(of: path), mode != 0o600 else { return }
        if chmod(path, 0o600) != 0 {
            throw .notWritable(path: path, reason: "cannot set mode 0600: \(describe(errno))")
        }
    }

    /// Throws unless the process may read and write `path`.
    static func checkWritable(_ path: String) throws(StoreError) {
        if access(path, R_OK | W_OK) != 0 { throw .notWritable(path: path, reason: describe(errno)) }
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    /// The permission bits of `path` (such as 0o600), or `nil` if it does not exist.
    static func permissions(of path: String) -> UInt16? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return UInt16(truncatingIfNeeded: info.st_mode & 0o7777)
    }

    /// `path` with its last component removed ("/" and "." stay as they are).
    static func parentDirectory(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        if slash == trimmed.startIndex { return "/" }
        return String(trimmed[..<slash])
    }

    /// `strerror` for an `errno` value.
    static func describe(_ error: Int32) -> String {
        guard let message = strerror(error) else { return "error \(error)" }
        return String(cString: message)
    }
}
