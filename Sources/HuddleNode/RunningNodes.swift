import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the nodes running for this user keep their data, by nick, so that `huddle status --name
/// bob` finds bob's node when it was started with `--data-dir` somewhere else (the two-homes bed,
/// a test, a USB stick). Each running node puts a symbolic link `NICK.PID → DATA DIR` in the
/// user's runtime directory (`$XDG_RUNTIME_DIR/huddle`, else `/tmp/huddle-UID`, made 0700 and used
/// only if this user owns it and nobody else can write to it) and takes it away when it stops.
/// Several nodes may go by one nick (two tries at once, a node killed and one started after it):
/// the one asked for is a live one, whose control socket answers, and a link a killed node left
/// behind is taken away when it is found (``stale``, to say so).
///
/// ```swift
/// RunningNodes.register(nick: "bob", dataDir: "/tmp/try/bob")   // at start
/// RunningNodes.find("bob")                                       // (live: "/tmp/try/bob", stale: [])
/// RunningNodes.unregister(nick: "bob", dataDir: "/tmp/try/bob") // at stop
/// ```
public enum RunningNodes {
    /// The index directory, made if missing; `nil` when it cannot be made or is not safely this
    /// user's (then nodes run as before, found by `--data-dir` or their default dir).
    static func directory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let base: String
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            base = runtime + "/huddle"
        } else {
            base = "/tmp/huddle-\(getuid())"
        }
        if mkdir(base, 0o700) != 0 && errno != EEXIST { return nil }
        var info = stat()
        guard lstat(base, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == getuid(),
            info.st_mode & 0o022 == 0
        else { return nil }
        return base
    }

    /// The links' name for `nick`: the nick itself when it is a plain file name, else its UTF-8
    /// bytes in hex (a nick may hold a `/` or start with a dot).
    static func linkName(for nick: String) -> String {
        let plain = !nick.isEmpty && !nick.hasPrefix(".") && !nick.contains("/") && nick.utf8.count <= 64
        return plain ? nick : "x" + nick.utf8.map { String(format: "%02x", $0) }.joined()
    }

    /// Records that a node `nick` runs with `dataDir`, in this process.
    public static func register(nick: String, dataDir: String) {
        guard let index = directory() else { return }
        let link = index + "/" + linkName(for: nick) + ".\(getpid())"
        let staging = link + ".new"
        unlink(staging)
        guard symlink(dataDir, staging) == 0 else { return }
        if rename(staging, link) != 0 { unlink(staging) }
    }

    /// Takes this process's record away.
    public static func unregister(nick: String, dataDir: String) {
        guard let index = directory() else { return }
        let link = index + "/" + linkName(for: nick) + ".\(getpid())"
        if (try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == dataDir { unlink(link) }
    }

    /// The data dir of a running node `nick` whose control socket answers (the newest record
    /// first), and the data dirs of records left by nodes that are gone, which are taken away.
    public static func find(_ nick: String) -> (live: String?, stale: [String]) {
        guard let index = directory(),
            let names = try? FileManager.default.contentsOfDirectory(atPath: index)
        else { return (nil, []) }
        let prefix = linkName(for: nick) + "."
        var records: [(path: String, dataDir: String, pid: pid_t, since: Date)] = []
        for name in names where name.hasPrefix(prefix) && !name.hasSuffix(".new") {
            guard let pid = pid_t(name.dropFirst(prefix.count)) else { continue }
            let path = index + "/" + name
            guard let dataDir = try? FileManager.default.destinationOfSymbolicLink(atPath: path) else { continue }
            let since = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? .distantPast
            records.append((path, dataDir, pid, since))
        }
        var live: String?
        var stale: [String] = []
        for record in records.sorted(by: { $0.since > $1.since }) {
            let running = kill(record.pid, 0) == 0 || errno == EPERM
            if running, isAnswering(DataDirectory.controlSocketPath(in: record.dataDir)) {
                live = live ?? record.dataDir
            } else if !running {
                unlink(record.path)
                stale.append(record.dataDir)
            }
        }
        return (live, stale)
    }

    /// Whether something accepts connections on the Unix socket at `path` now (a socket file a
    /// killed node left behind refuses them).
    public static func isAnswering(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in bytes.enumerated() { raw[i] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return connected == 0
    }
}
