public import HuddleCore

extension DoctorFacts {
    /// Reads every fact `huddle doctor` and `/doctor` check: a browse of `browsing` (the mDNS
    /// daemon and the nodes it sees), the interfaces and the default route, and the firewall
    /// for `port`; `node` is the running node's own view of its peers, when there is one. The
    /// firewall tools run as processes: call it off any event loop.
    public static func gather(node: Node?, port: Int, browsing: Duration) async -> DoctorFacts {
        let mdns: MDNS
        if let seen = await Browse.nodes(for: browsing) {
            mdns = .answers(
                announced: seen.values.sorted { $0.nick < $1.nick }.map { peer in
                    Announced(
                        id: peer.id.hex, nick: peer.nick, address: "\(PeerAddress(host: peer.host, port: peer.port))",
                        protocolVersion: peer.protocolVersion)
                })
        } else {
            mdns = .noDaemon
        }
        return DoctorFacts(
            mdns: mdns, interfaces: MachineNetwork.interfaces(), defaultRoute: MachineNetwork.defaultRoute(),
            firewall: FirewallRules.read(port: port), node: node, port: port,
            protocolVersion: Int(WireProtocol.version))
    }
}

extension DoctorFacts.Node {
    /// A running node as its status shows it (its own, or a control socket's answer).
    public init(status: NodeStatus) {
        self.init(
            id: status.node.id, nick: status.node.nick, port: status.node.port,
            peers: status.peers.map { peer in
                DoctorFacts.Peer(
                    id: peer.id, nick: peer.nick, address: peer.address, state: peer.state, foundBy: peer.foundBy,
                    answered: peer.rttMs != nil)
            }, interface: status.node.interface, mdnsOff: status.node.mdns == "off")
    }
}
