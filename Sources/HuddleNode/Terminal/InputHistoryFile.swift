import Foundation

/// The console's input history on disk: `console-history` in the data directory, one line per
/// entry, readable by its owner only. Each submitted line is appended at once, so a crash loses
/// nothing; at start the file is read back and, once it has grown to twice the limit, rewritten
/// with only the newest entries, so it stays bounded.
///
/// Failures to read or write are not fatal: the console works without a history file.
struct InputHistoryFile: Sendable {
    let path: String
    let limit: Int

    init(directory: String, limit: Int = InputHistory.defaultLimit) {
        path = (directory as NSString).appendingPathComponent("console-history")
        self.limit = limit
    }

    /// The newest entries, oldest first; trims the file when it has grown past twice the limit.
    func load() -> [String] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        let kept = Array(lines.suffix(limit))
        if lines.count >= 2 * limit {
            let text = kept.map { $0 + "\n" }.joined()
            _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        }
        return kept
    }

    /// Appends one entry (a line without newlines, as the editor makes them).
    func append(_ line: String) {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        _ = writeAll(Array((line + "\n").utf8), to: descriptor)
    }
}
