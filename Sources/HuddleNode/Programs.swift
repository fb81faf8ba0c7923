import Foundation

/// Finding a program to run, as a shell would: the desktop's opener for a photo (`/open`), the
/// firewall's tools for `huddle doctor`.
enum Programs {
    /// `name`'s path: itself if it has a slash, else the first executable of that name in the
    /// directories of `path` (colon-separated, as `$PATH`).
    static func find(_ name: String, in path: String) -> String? {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
