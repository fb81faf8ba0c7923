import Foundation

/// What the firewall does to the node's port and to mDNS, read the way a person would: the rules
/// `nft list ruleset` and `iptables-save` print (as root: they need it), and whether ufw or
/// firewalld is on.
public enum FirewallRules {
    /// The firewall's state for `port` on this machine.
    public static func read(port: Int) -> DoctorFacts.Firewall {
        var firewall = DoctorFacts.Firewall()
        let root = geteuid() == 0
        for (source, command) in [("nftables", ["nft", "list", "ruleset"]), ("iptables", ["iptables-save"])] {
            // (Where the tools live as root runs them, whatever this user's $PATH.)
            guard let path = Programs.find(command[0], in: "/usr/sbin:/sbin:/usr/bin:/bin") else { continue }
            guard root else {
                firewall.unreadable.append("\(source): needs root")
                continue
            }
            guard let output = run(path, Array(command.dropFirst())) else {
                firewall.unreadable.append("\(source): \(command.joined(separator: " ")) failed")
                continue
            }
            firewall.read.append(source)
            let rules = source == "nftables" ? blockingNFT(output, port: port) : blockingIPTables(output, port: port)
            firewall.blocking += rules.map { DoctorFacts.Rule(source: source, text: $0) }
        }
        if let ufw = try? String(contentsOfFile: "/etc/ufw/ufw.conf", encoding: .utf8),
            ufw.split(separator: "\n").contains(where: { $0.trimmingCharacters(in: .whitespaces) == "ENABLED=yes" })
        {
            firewall.managers.append("ufw")
        }
        if processRunning("firewalld") { firewall.managers.append("firewalld") }
        return firewall
    }

    /// `iptables-save` lines that drop or refuse packets to `port` or to 5353, in any chain; and
    /// an INPUT chain that drops whatever no rule accepts (its policy, or a last rule with no
    /// match), unless some rule accepts `port`.
    static func blockingIPTables(_ text: String, port: Int) -> [String] {
        let lines = text.split(separator: "\n").map(String.init)
        let names = { (line: String, port: Int) in line.contains("--dport \(port) ") || line.hasSuffix("--dport \(port)") }
        let accepted = lines.contains { names($0, port) && $0.contains("-j ACCEPT") }
        return lines.filter { line in
            let drops = line.contains("-j DROP") || line.contains("-j REJECT")
            if line.hasPrefix("-A "), drops, names(line, port) || names(line, 5353) { return true }
            guard !accepted else { return false }
            return line.hasPrefix(":INPUT DROP") || line == "-A INPUT -j DROP" || line.hasPrefix("-A INPUT -j REJECT")
        }
    }

    /// `nft list ruleset` lines that drop or refuse packets to `port` or to 5353, and input hooks
    /// whose policy is drop, unless some rule accepts `port`.
    static func blockingNFT(_ text: String, port: Int) -> [String] {
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let names = { (line: String, port: Int) in line.contains("dport \(port) ") }
        let accepted = lines.contains { names($0, port) && $0.hasSuffix("accept") }
        return lines.filter { line in
            if line.hasSuffix("drop") || line.contains("reject"), names(line, port) || names(line, 5353) { return true }
            return !accepted && line.contains("hook input") && line.contains("policy drop")
        }
    }

    /// The command's standard output, or `nil` if it could not run or failed.
    private static func run(_ path: String, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    private static func processRunning(_ name: String) -> Bool {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return false }
        return entries.contains { entry in
            entry.allSatisfy(\.isNumber)
                && (try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) == name
        }
    }
}
