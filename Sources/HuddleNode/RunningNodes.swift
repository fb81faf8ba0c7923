import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the nodes running for this user keep their data, by nick, so that `huddle status --name
/// bob` finds bob's node when it was started with `--data-dir` somewhere else (the two-homes bed,
/// a test, a USB stick). Each running node puts a symbolic link `NICK → DATA DIR` in the user's
/// runtime directory (`$XDG_RUNTIME_DIR/huddle`, else `/tmp/huddle-UID`, made 0700 and used only
/// if this user owns it and nobody else can write to it) and takes it away when it stops; a link
/// left by a node that was killed points at a data dir with no control socket answering, which the
/// command then reports as it would any stopped node.
///
/// ```swift
/// RunningNodes.register(nick: "bob", dataDir: "/tmp/try/bob")   // at start
/// RunningNodes.dataDirectory(of: "bob")                          // "/tmp/try/bob"
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

    /// The link's name for `nick`: the nick itself when it is a plain file name, else its UTF-8
    /// bytes in hex (a nick may hold a `/` or start with a dot).
    static func linkName(for nick: String) -> String {
        let plain = !nick.isEmpty && !nick.hasPrefix(".") && !nick.contains("/") && nick.utf8.count <= 64
        return plain ? nick : "x" + nick.utf8.map { String(format: "%02x", $0) }.joined()
    }

    /// Records that the node `nick` runs with `dataDir` (replacing an older record of that nick).
    public static func register(nick: String, dataDir: String) {
        guard let index = directory() else { return }
        let link = index + "/" + linkName(for: nick)
        let staging = link + ".\(getpid()).new"
        unlink(staging)
        guard symlink(dataDir, staging) == 0 else { return }
        if rename(staging, link) != 0 { unlink(staging) }
    }

    /// Takes the record away, if it is still this node's (another node of the same nick may have
    /// started since).
    public static func unregister(nick: String, dataDir: String) {
        guard let index = directory() else { return }
        let link = index + "/" + linkName(for: nick)
        if (try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == dataDir { unlink(link) }
    }

    /// The data dir of the running node `nick`, if one recorded itself.
    public static func dataDirectory(of nick: String) -> String? {
        guard let index = directory() else { return nil }
        return try? FileManager.default.destinationOfSymbolicLink(atPath: index + "/" + linkName(for: nick))
    }
}
