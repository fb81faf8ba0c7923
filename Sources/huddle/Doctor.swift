import ArgumentParser
import Foundation
import HuddleCore
import HuddleNode

extension Huddle {
    /// `huddle doctor`: why friends do not find each other, with what to do (issue 47).
    struct Doctor: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check why friends on this network are not found, and say what to change.",
            discussion: """
                Checks, each with a verdict (ok, warn, fail, unknown) and what to do: the mDNS \
                daemon and the Huddle nodes it sees (and their protocol versions); whether the \
                running node's own announcement comes back; the network interfaces and the \
                default route (a VPN or a container bridge in the way, two networks at once); \
                the firewall (nftables and iptables rules that drop the node's port or mDNS, read \
                as root; ufw or firewalld on); and, with --name or --data-dir, the running \
                node's peers, naming those announced that never answered. The first line is the \
                summary: "ok", or the likeliest cause first. Exits with status 1 when a check \
                fails.
                """
        )

        @Option(name: .long, help: ArgumentHelp("The running node's nick, to check its peers too.", valueName: "NICK"))
        var name: String?

        @Option(name: .long, help: ArgumentHelp("The running node's data dir, instead of --name.", valueName: "DIR"))
        var dataDir: String?

        @Option(
            name: .long,
            help: ArgumentHelp("The port to check the firewall for when no node runs (default 7400).", valueName: "N"))
        var port: Int?

        @Option(name: .long, help: ArgumentHelp("How long to browse for other nodes, in seconds.", valueName: "S"))
        var timeout: Double = 3

        @Flag(name: .long, help: "Print the checks as one JSON object.")
        var json = false

        func validate() throws {
            guard timeout > 0, timeout <= 60 else { throw ValidationError("--timeout must be between 0 and 60 seconds") }
            if let port, !(1...65_535).contains(port) { throw ValidationError("--port must be between 1 and 65535") }
        }

        func run() async throws {
            let node = try await runningNode()
            let facts = await DoctorFacts.gather(
                node: node, port: node?.port ?? port ?? 7400, browsing: .milliseconds(Int64(timeout * 1000)))
            let diagnosis = Diagnosis(facts)
            print(json ? try diagnosis.jsonText() : diagnosis.text(width: TerminalWidth.ofStandardOutput()))
            if diagnosis.worst == .fail { throw ExitCode.failure }
        }

        /// The node these options name, from its status; `nil` when none is named. A node named
        /// that does not run is an error: the checks would be about another machine state.
        private func runningNode() async throws -> DoctorFacts.Node? {
            guard name != nil || dataDir != nil else { return nil }
            var arguments: [String] = []
            if let name { arguments += ["--name", name] }
            if let dataDir { arguments += ["--data-dir", dataDir] }
            let location = try NodeLocationOptions.parse(arguments)
            guard case .status(let status) = try await location.ask(.status) else { return nil }
            return DoctorFacts.Node(status: status)
        }
    }
}
