import ArgumentParser
import Foundation
import HuddleNode

/// Which node a command is about: `--name NICK` (its default data dir) or `--data-dir DIR`.
/// Shared by the commands that talk to a node or read its store.
struct NodeLocationOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The node's nick: finds its default data dir, or the one a running node of that nick was started with.",
            valueName: "NICK"))
    var name: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The node's data dir (default: $XDG_DATA_HOME/huddle/NICK or ~/.local/share/huddle/NICK).",
            valueName: "DIR"))
    var dataDir: String?

    func validate() throws {
        guard name != nil || dataDir != nil else { throw ValidationError("give --name NICK or --data-dir DIR") }
    }

    /// The data dir: `--data-dir`; for `--name`, its default one when a node answers there, else
    /// the one a running node of that nick recorded (``RunningNodes``: started with `--data-dir`),
    /// else the default one. A record a killed node left is said on stderr, once, and taken away.
    var directory: String {
        let standard = DataDirectory.resolve(explicit: dataDir, nick: name ?? "")
        guard dataDir == nil, let name else { return standard }
        if RunningNodes.isAnswering(DataDirectory.controlSocketPath(in: standard)) { return standard }
        let found = RunningNodes.find(name)
        for stale in found.stale where found.live == nil {
            FileHandle.standardError.write(Data(
                "huddle: a node called \(name) ran with data dir \(stale) and is gone (killed?); its record is removed\n".utf8))
        }
        return found.live ?? standard
    }

    /// How to start a node that these options would find.
    var startCommand: String {
        let nick = name.map(Self.shellQuoted) ?? "NICK"
        let location = dataDir == nil ? "" : " --data-dir \(Self.shellQuoted(directory))"
        return "huddle run --name \(nick)\(location)"
    }

    /// Sends one request to the node's control socket.
    func ask(_ request: ControlRequest) async throws -> ControlResponse {
        let response = try await ControlClient.request(
            request, socketPath: DataDirectory.controlSocketPath(in: directory), timeout: .seconds(10),
            startCommand: startCommand)
        if case .error(let message) = response { throw CommandFailure(message) }
        return response
    }

    private static func shellQuoted(_ text: String) -> String {
        let plain = text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                    || "-_./@%+=:,".unicodeScalars.contains(scalar))
        }
        return plain && !text.isEmpty ? text : "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}
