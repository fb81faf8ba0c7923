import Foundation

/// Where a node keeps its store and control socket.
///
/// `--data-dir DIR` wins; otherwise `$XDG_DATA_HOME/huddle/NICK`, or `~/.local/share/huddle/NICK`.
///
/// ```swift
/// DataDirectory.resolve(explicit: nil, nick: "alice")   // "/home/me/.local/share/huddle/alice"
/// ```
public enum DataDirectory {
    /// File name of the control socket inside the data dir.
    public static let controlSocketFileName = "control.sock"

    public static func resolve(
        explicit: String?, nick: String, environment: [String: String]? = nil
    ) -> String {
        let environment = environment ?? ProcessInfo.processInfo.environment
        if let explicit { return URL(fileURLWithPath: explicit).standardizedFileURL.path }
        let base: String
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty {
            base = xdg
        } else {
            let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
            base = home + "/.local/share"
        }
        return URL(fileURLWithPath: base).appendingPathComponent("huddle").appendingPathComponent(nick).path
    }

    public static func controlSocketPath(in directory: String) -> String {
        URL(fileURLWithPath: directory).appendingPathComponent(controlSocketFileName).path
    }
}
