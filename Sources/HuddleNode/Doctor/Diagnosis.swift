/// `huddle doctor`'s verdicts on ``DoctorFacts``: one check per thing that keeps friends from
/// finding each other (the mDNS daemon, this node's own announcement, the interfaces and routes,
/// the firewall, the peers), each with what to do, and a summary line naming the likeliest cause
/// first. Pure: the facts come in, words go out.
///
/// ```swift
/// let diagnosis = Diagnosis(facts)
/// print(diagnosis.summary)            // "ok", or "a firewall rule drops ..."
/// for check in diagnosis.checks { print(check.verdict, check.name, check.detail) }
/// ```
public struct Diagnosis: Sendable, Equatable {
    public enum Verdict: String, Sendable, Equatable, Comparable {
        case ok
        /// Could not be checked here (say why, and how to).
        case unknown
        case warn
        case fail

        private var rank: Int {
            switch self {
            case .ok: 0
            case .unknown: 1
            case .warn: 2
            case .fail: 3
            }
        }
        public static func < (a: Verdict, b: Verdict) -> Bool { a.rank < b.rank }
    }

    public struct Check: Sendable, Equatable {
        /// `mdns`, `announcement`, `interfaces`, `firewall`, `peers`.
        public var name: String
        public var verdict: Verdict
        public var detail: String
        /// What to do, when something is wrong.
        public var fix: String?
        /// Which comes first in the summary among the checks that are not ok (lower first).
        var likelihood: Int
    }

    public private(set) var checks: [Check] = []

    /// "ok", or the likeliest cause and what to do.
    public var summary: String {
        let wrong = checks.filter { $0.verdict >= .warn }
        guard let first = wrong.max(by: { ($0.verdict, $0.likelihood) < ($1.verdict, $1.likelihood) }) else {
            return "ok"
        }
        return first.detail + (first.fix.map { ": " + $0 } ?? "")
    }

    /// The worst verdict: what the command's exit status says (0 unless something failed).
    public var worst: Verdict { checks.map(\.verdict).max() ?? .ok }

    public init(_ facts: DoctorFacts) {
        checks = [
            mdns(facts), announcement(facts),
            Self.interfaces(facts.interfaces, defaultRoute: facts.defaultRoute, chosen: facts.node?.interface),
            firewall(facts), peers(facts),
        ].compactMap { $0 }
    }

    // MARK: The checks

    private func mdns(_ facts: DoctorFacts) -> Check {
        if let node = facts.node, node.mdnsOff {
            // Whatever the daemon does, this node neither announces itself nor looks.
            var noDaemon = false
            var waiting = ""
            switch facts.mdns {
            case .noDaemon: noDaemon = true
            case .answers(let announced):
                let known = Set(node.peers.map(\.id))
                let others = announced.filter { $0.id != node.id && !known.contains($0.id) }.map(\.nick).sorted()
                if !others.isEmpty {
                    waiting = "; \(others.joined(separator: ", ")) "
                        + (others.count == 1 ? "announces itself" : "announce themselves") + " here and would be found"
                }
            }
            return Check(
                name: "mdns", verdict: .warn,
                detail: "\(node.nick) runs with --no-mdns: it neither announces itself nor looks for friends, so it finds "
                    + "only friends given with --peer, those given its address, and the peers they know"
                    + (noDaemon ? "; no mDNS daemon answers on this machine either (avahi-daemon)" : waiting),
                fix: noDaemon
                    ? "sudo systemctl enable --now avahi-daemon, then start huddle again without --no-mdns"
                    : "start huddle again without --no-mdns",
                likelihood: 60)
        }
        switch facts.mdns {
        case .answers(let announced):
            let others = announced.filter { $0.id != facts.node?.id }.map(\.nick).sorted()
            guard !others.isEmpty else {
                return Check(
                    name: "mdns", verdict: .warn,
                    detail: "the mDNS daemon answers, but no other Huddle node announces itself on this network",
                    fix: "are your friends on the same Wi-Fi (not a guest one), with huddle running?", likelihood: 40)
            }
            let nodes =
                others.count == 1
                ? "1 other Huddle node announces itself" : "\(others.count) other Huddle nodes announce themselves"
            return Check(
                name: "mdns", verdict: .ok, detail: "the mDNS daemon answers; \(nodes): \(others.joined(separator: ", "))",
                fix: nil, likelihood: 0)
        case .noDaemon:
            return Check(
                name: "mdns", verdict: .fail,
                detail: "no mDNS daemon answers on this machine (avahi-daemon), so nobody is found or finds you",
                fix: "sudo systemctl enable --now avahi-daemon (or give a friend's address: --peer ADDRESS:PORT)",
                likelihood: 100)
        }
    }

    private func announcement(_ facts: DoctorFacts) -> Check? {
        guard let node = facts.node, !node.mdnsOff, case .answers(let announced) = facts.mdns else { return nil }
        if announced.contains(where: { $0.id == node.id }) {
            return Check(
                name: "announcement", verdict: .ok, detail: "this node's own announcement comes back", fix: nil,
                likelihood: 0)
        }
        return Check(
            name: "announcement", verdict: .fail,
            detail: "this node (\(node.nick)) is running but its announcement does not come back: mDNS does not work "
                + "on this machine", fix: "let UDP 5353 in and out (sudo ufw allow 5353/udp), and check that "
                + "avahi-daemon uses the Wi-Fi or Ethernet interface (allow-interfaces in /etc/avahi/avahi-daemon.conf)",
            likelihood: 90)
    }

    /// The interfaces and the default route (`nil`: none), and the one interface the node was
    /// told to keep to (`--interface`), if any; without it, the one it keeps to by itself
    /// (``MachineNetwork/keptInterface(in:)``). A node says the warnings at start
    /// (``Node/tellOfTheNetwork()``).
    public static func interfaces(_ interfaces: [DoctorFacts.Interface], defaultRoute: String?, chosen: String? = nil)
        -> Check
    {
        let lan = interfaces.filter { $0.kind == .lan && !$0.addresses.isEmpty }
        let named = lan.map { "\($0.name) \($0.addresses.joined(separator: ", "))" }.joined(separator: "; ")
        guard !lan.isEmpty else {
            return Check(
                name: "interfaces", verdict: .fail, detail: "no Wi-Fi or Ethernet address: this machine is on no network",
                fix: "join the home's Wi-Fi", likelihood: 95)
        }
        if let chosen {
            guard let interface = interfaces.first(where: { $0.name == chosen }), !interface.addresses.isEmpty else {
                return Check(
                    name: "interfaces", verdict: .fail,
                    detail: "the node keeps to \(chosen) (--interface), which has no address now: nobody finds it",
                    fix: "start it with --interface \(lan[0].name) (you are on \(named))", likelihood: 93)
            }
            guard interface.kind == .lan else {
                let what = interface.kind == .tunnel ? "a VPN" : "a bridge for containers or virtual machines"
                return Check(
                    name: "interfaces", verdict: .warn,
                    detail: "the node keeps to \(chosen) (--interface), \(what): friends on the Wi-Fi are not there",
                    fix: "start it with --interface \(lan[0].name) (you are on \(named))", likelihood: 80)
            }
        }
        if let route = defaultRoute, let tunnel = interfaces.first(where: { $0.name == route && $0.kind == .tunnel }) {
            return Check(
                name: "interfaces", verdict: .warn,
                detail: "the default route goes through \(tunnel.name), a VPN; friends on this network reach you on \(named)",
                fix: "if a friend is not found, let the VPN allow the local network (Tailscale: --exit-node-allow-lan-access; "
                    + "WireGuard: exclude the home's subnet from AllowedIPs), or give the local address: --peer",
                likelihood: 50)
        }
        if chosen == nil, let kept = MachineNetwork.keptInterface(in: interfaces),
            let interface = lan.first(where: { $0.name == kept })
        {
            let beside = interfaces.filter { $0.kind != .lan && !$0.addresses.isEmpty }.map(\.name).joined(separator: ", ")
            return Check(
                name: "interfaces", verdict: .ok,
                detail: "friends reach you on \(kept) \(interface.addresses.joined(separator: ", ")) (mDNS there only: "
                    + "\(beside) beside it is no network of friends; --interface NAME picks another)",
                fix: nil, likelihood: 0)
        }
        if chosen == nil, let bridge = interfaces.first(where: { $0.kind == .containerBridge && !$0.addresses.isEmpty }) {
            return Check(
                name: "interfaces", verdict: .warn,
                detail: "\(bridge.name) (\(bridge.addresses.joined(separator: ", "))) is a bridge for containers or virtual "
                    + "machines: the mDNS daemon may announce its address too, which friends cannot reach; you are on \(named)",
                fix: "start Huddle with --interface \(lan[0].name) (announces there only), or for every program set "
                    + "allow-interfaces=\(lan[0].name) in /etc/avahi/avahi-daemon.conf and sudo systemctl restart avahi-daemon",
                likelihood: 30)
        }
        let subnets = Set(lan.flatMap(\.addresses).map(Self.subnet))
        if chosen == nil, subnets.count > 1 {
            return Check(
                name: "interfaces", verdict: .warn,
                detail: "this machine is on \(subnets.count) networks (\(named)): mDNS stays on each, and a friend on "
                    + "the other cannot find you",
                fix: "use the network your friends are on (--interface NAME keeps Huddle to it), or --peer across",
                likelihood: 20)
        }
        if let chosen, let interface = lan.first(where: { $0.name == chosen }) {
            return Check(
                name: "interfaces", verdict: .ok,
                detail: "friends reach you on \(chosen) \(interface.addresses.joined(separator: ", ")) (--interface: mDNS "
                    + "there only)", fix: nil, likelihood: 0)
        }
        return Check(name: "interfaces", verdict: .ok, detail: "friends reach you on \(named)", fix: nil, likelihood: 0)
    }

    private func firewall(_ facts: DoctorFacts) -> Check {
        let port = facts.port
        let allow = "sudo ufw allow \(port)/udp; sudo ufw allow \(port)/tcp; sudo ufw allow 5353/udp"
        if !facts.firewall.blocking.isEmpty {
            let rules = facts.firewall.blocking.map { "\($0.source): \($0.text)" }.joined(separator: "; ")
            return Check(
                name: "firewall", verdict: .fail,
                detail: "a firewall rule here drops what friends send to port \(port) or to mDNS (\(rules))",
                fix: "remove the rule or let the ports in (\(allow))", likelihood: 88)
        }
        if !facts.firewall.managers.isEmpty {
            return Check(
                name: "firewall", verdict: .warn,
                detail: "\(facts.firewall.managers.joined(separator: " and ")) is on: it drops what it was not told to let in",
                fix: "\(allow) (firewalld: sudo firewall-cmd --add-port=\(port)/udp --add-port=\(port)/tcp --add-service=mdns)",
                likelihood: 70)
        }
        if facts.firewall.read.isEmpty {
            let why = facts.firewall.unreadable.isEmpty ? "" : " (\(facts.firewall.unreadable.joined(separator: "; ")))"
            return Check(
                name: "firewall", verdict: .unknown, detail: "the firewall's rules could not be read\(why)",
                fix: "sudo huddle doctor reads them", likelihood: 0)
        }
        return Check(
            name: "firewall", verdict: .ok,
            detail: "no rule drops port \(port) or mDNS (\(facts.firewall.read.joined(separator: ", ")) read)", fix: nil,
            likelihood: 0)
    }

    private func peers(_ facts: DoctorFacts) -> Check? {
        var wrong: [String] = []
        var likelihood = 0
        if let node = facts.node {
            // Announced, and not a peer that answered: either still listed unanswered, or already
            // given up on and forgotten (then only the browse still sees it).
            let answered = Set(node.peers.filter(\.answered).map(\.id))
            // (A gone one is not counted: a node that crashed leaves its record in the daemons'
            // caches for a while, and is no friend to look for.)
            var silent = node.peers.filter { $0.foundBy == "mdns" && !$0.answered && $0.state != "gone" }
                .map { ($0.id, $0.nick, $0.address) }
            // (A node that does not browse never reached them: the mdns check says so.)
            if !node.mdnsOff, case .answers(let announced) = facts.mdns {
                // (One of another protocol never answers, whatever the network: said below.)
                silent += announced.filter { peer in
                    peer.id != node.id && peer.protocolVersion == facts.protocolVersion && !answered.contains(peer.id)
                        && !silent.contains { $0.0 == peer.id }
                }.map { ($0.id, $0.nick, $0.address) }
            }
            // Announced from an address on none of this computer's networks: a second router or
            // a mesh's own subnet between them, whatever the firewalls do.
            let ours = Set(facts.interfaces.filter { $0.kind == .lan }.flatMap(\.addresses).map(Self.subnet)).sorted()
            let elsewhere = ours.isEmpty ? [] : silent.filter { Self.isOnLink($0.2, of: facts.interfaces) == false }
            if !elsewhere.isEmpty {
                wrong.append(
                    elsewhere.map { "\($0.1) (\($0.2))" }.joined(separator: ", ")
                        + (elsewhere.count == 1 ? " announces itself" : " announce themselves")
                        + " from an address on none of this computer's networks (\(ours.joined(separator: ", "))): "
                        + "a second router or a mesh's own network keeps you apart; connect both to the same Wi-Fi "
                        + "router, or give the address where a route leads there: --peer ADDRESS:PORT")
                likelihood = 87
                silent.removeAll { peer in elsewhere.contains { $0.0 == peer.0 } }
            }
            if !silent.isEmpty {
                wrong.append(
                    silent.map { "\($0.1) (\($0.2))" }.joined(separator: ", ")
                        + (silent.count == 1 ? " announces itself" : " announce themselves")
                        + " but never answered: a firewall on that computer "
                        + "or this one, or a Wi-Fi that keeps devices apart (run huddle doctor there too)")
                likelihood = max(likelihood, 85)
            }
        }
        if case .answers(let announced) = facts.mdns {
            let other = announced.filter { $0.protocolVersion != facts.protocolVersion && $0.id != facts.node?.id }
            for peer in other {
                let who = peer.protocolVersion < facts.protocolVersion ? peer.nick : "you"
                wrong.append(
                    "\(peer.nick) speaks protocol \(peer.protocolVersion) and you \(facts.protocolVersion): \(who) should "
                        + "update Huddle")
                likelihood = max(likelihood, 60)
            }
        }
        guard let node = facts.node else {
            guard !wrong.isEmpty else { return nil }
            return Check(name: "peers", verdict: .warn, detail: wrong.joined(separator: "; "), fix: nil, likelihood: likelihood)
        }
        if !wrong.isEmpty {
            return Check(name: "peers", verdict: .fail, detail: wrong.joined(separator: "; "), fix: nil, likelihood: likelihood)
        }
        let alive = node.peers.filter { $0.state == "alive" }.map(\.nick).sorted()
        return Check(
            name: "peers", verdict: .ok,
            detail: alive.isEmpty ? "the node has no peers yet" : "the node talks with \(alive.joined(separator: ", "))",
            fix: nil, likelihood: 0)
    }

    /// Whether `address` (`host:port`, IPv4) is on the subnet of one of `interfaces`' addresses;
    /// `nil` when it is not an IPv4 address (an IPv6 one, a name).
    static func isOnLink(_ address: String, of interfaces: [DoctorFacts.Interface]) -> Bool? {
        let host = address.split(separator: ":").first.map(String.init) ?? address
        let octets = host.split(separator: ".")
        guard address.split(separator: ":").count <= 2, octets.count == 4, octets.allSatisfy({ UInt8($0) != nil })
        else { return nil }
        return interfaces.flatMap(\.addresses).contains { cidr in
            let prefix = cidr.split(separator: "/").dropFirst().first.map(String.init) ?? "32"
            return subnet("\(host)/\(prefix)") == subnet(cidr)
        }
    }

    /// `192.168.1.23/24` → `192.168.1.0/24` (an address without a prefix is its own subnet).
    static func subnet(_ cidr: String) -> String {
        let parts = cidr.split(separator: "/")
        guard parts.count == 2, let prefix = Int(parts[1]), (0...32).contains(prefix) else { return cidr }
        let octets = parts[0].split(separator: ".").compactMap { UInt32($0) }
        guard octets.count == 4 else { return cidr }
        let address = octets.reduce(0) { $0 << 8 | $1 }
        let mask: UInt32 = prefix == 0 ? 0 : ~UInt32(0) << (32 - prefix)
        let network = address & mask
        return "\(network >> 24).\(network >> 16 & 255).\(network >> 8 & 255).\(network & 255)/\(prefix)"
    }
}
