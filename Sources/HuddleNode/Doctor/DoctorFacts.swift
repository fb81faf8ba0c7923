/// What `huddle doctor` found out about this machine, its network and the node running on it:
/// facts only, read by the command (its files, the mDNS daemon, the control socket).
/// ``Diagnosis`` turns them into checks with verdicts and what to do (issue 47).
public struct DoctorFacts: Sendable, Equatable {
    /// Whether an mDNS daemon answers, and what a short browse saw.
    public enum MDNS: Sendable, Equatable {
        /// It answers; `announced` are the Huddle nodes it saw, the running node's own included.
        case answers(announced: [Announced])
        /// No daemon answers.
        case noDaemon
    }

    /// A Huddle node a browse saw.
    public struct Announced: Sendable, Equatable {
        public var id: String
        public var nick: String
        /// `host:port`, as resolved.
        public var address: String
        public var protocolVersion: Int

        public init(id: String, nick: String, address: String, protocolVersion: Int) {
            self.id = id
            self.nick = nick
            self.address = address
            self.protocolVersion = protocolVersion
        }
    }

    /// A network interface that is up, with its IPv4 addresses (`a.b.c.d/prefix`).
    public struct Interface: Sendable, Equatable {
        public enum Kind: String, Sendable, Equatable {
            /// Wi-Fi or Ethernet: where friends are.
            case lan
            /// A VPN or tunnel (WireGuard, Tailscale, OpenVPN, ZeroTier, PPP).
            case tunnel
            /// A bridge for containers or virtual machines (Docker, libvirt, LXC, Podman).
            case containerBridge = "container_bridge"
        }

        public var name: String
        public var addresses: [String]
        public var kind: Kind

        public init(name: String, addresses: [String], kind: Kind) {
            self.name = name
            self.addresses = addresses
            self.kind = kind
        }

        /// What an interface's name says it is (the names their tools give them).
        public static func kind(ofName name: String) -> Kind {
            let tunnels = ["tun", "tap", "wg", "tailscale", "utun", "zt", "ppp", "ipsec", "vti", "nordlynx", "proton"]
            let bridges = ["docker", "br-", "virbr", "veth", "cni", "podman", "lxc", "lxd", "vboxnet", "vmnet", "flannel", "cali"]
            if tunnels.contains(where: name.hasPrefix) { return .tunnel }
            if bridges.contains(where: name.hasPrefix) { return .containerBridge }
            return .lan
        }
    }

    /// A firewall rule that drops or refuses packets, as its tool printed it.
    public struct Rule: Sendable, Equatable {
        /// `nftables`, `iptables`.
        public var source: String
        public var text: String

        public init(source: String, text: String) {
            self.source = source
            self.text = text
        }
    }

    /// What the firewall tools said, or why they could not be asked.
    public struct Firewall: Sendable, Equatable {
        /// Rules that drop or refuse inbound packets to the node's port or to mDNS (5353), or an
        /// input chain that drops whatever no rule accepts.
        public var blocking: [Rule]
        /// The tools asked (`nftables`, `iptables`).
        public var read: [String]
        /// What could not be read, and why (`nftables: needs root`).
        public var unreadable: [String]
        /// ufw or firewalld is on: they drop what they were not told to let in.
        public var managers: [String]

        public init(blocking: [Rule] = [], read: [String] = [], unreadable: [String] = [], managers: [String] = []) {
            self.blocking = blocking
            self.read = read
            self.unreadable = unreadable
            self.managers = managers
        }
    }

    /// A peer of the running node, from its status.
    public struct Peer: Sendable, Equatable {
        public var id: String
        public var nick: String
        public var address: String
        /// `alive`, `suspect`, `gone`.
        public var state: String
        /// `mdns`, `seed`, `gossip`, `inbound`.
        public var foundBy: String
        /// Whether it ever answered a probe at its address: a round trip was measured (status's
        /// `trusted` is no sign of it: a peer DNS-SD named is trusted before it answers).
        public var answered: Bool

        public init(id: String, nick: String, address: String, state: String, foundBy: String, answered: Bool) {
            self.id = id
            self.nick = nick
            self.address = address
            self.state = state
            self.foundBy = foundBy
            self.answered = answered
        }
    }

    /// The node running with this data dir, as its status says.
    public struct Node: Sendable, Equatable {
        public var id: String
        public var nick: String
        public var port: Int
        public var peers: [Peer]
        /// The one interface it announces and browses on (`--interface`), if it was given one.
        public var interface: String?
        /// It runs with `--no-mdns`: it neither announces itself nor browses.
        public var mdnsOff: Bool

        public init(
            id: String, nick: String, port: Int, peers: [Peer], interface: String? = nil, mdnsOff: Bool = false
        ) {
            self.id = id
            self.nick = nick
            self.port = port
            self.peers = peers
            self.interface = interface
            self.mdnsOff = mdnsOff
        }
    }

    public var mdns: MDNS
    public var interfaces: [Interface]
    /// The interface the default route goes out of, if any.
    public var defaultRoute: String?
    public var firewall: Firewall
    /// `nil`: no node runs with this data dir.
    public var node: Node?
    /// The port to check the firewall for: the running node's, else the one it would take.
    public var port: Int
    public var protocolVersion: Int

    public init(
        mdns: MDNS, interfaces: [Interface], defaultRoute: String?, firewall: Firewall, node: Node?, port: Int,
        protocolVersion: Int
    ) {
        self.mdns = mdns
        self.interfaces = interfaces
        self.defaultRoute = defaultRoute
        self.firewall = firewall
        self.node = node
        self.port = port
        self.protocolVersion = protocolVersion
    }
}
