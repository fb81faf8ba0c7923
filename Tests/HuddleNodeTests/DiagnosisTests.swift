import Testing

@testable import HuddleNode

/// `huddle doctor`'s verdicts from facts (issue 47): each cause named, with what to do, and the
/// likeliest first in the summary.
@Suite struct DiagnosisTests {
    private let wifi = DoctorFacts.Interface(name: "wlan0", addresses: ["192.168.1.23/24"], kind: .lan)
    private let bob = DoctorFacts.Announced(id: "b0", nick: "bob", address: "192.168.1.40:7400", protocolVersion: 5)
    private let me = DoctorFacts.Announced(id: "a1", nick: "alice", address: "192.168.1.23:7400", protocolVersion: 5)

    private func facts(
        mdns: DoctorFacts.MDNS? = nil, interfaces: [DoctorFacts.Interface]? = nil, defaultRoute: String? = "wlan0",
        firewall: DoctorFacts.Firewall = .init(read: ["iptables"]), node: DoctorFacts.Node? = nil
    ) -> DoctorFacts {
        DoctorFacts(
            mdns: mdns ?? .answers(announced: [me, bob]), interfaces: interfaces ?? [wifi], defaultRoute: defaultRoute,
            firewall: firewall, node: node, port: 7400, protocolVersion: 5)
    }

    private func node(peers: [DoctorFacts.Peer] = []) -> DoctorFacts.Node {
        DoctorFacts.Node(id: "a1", nick: "alice", port: 7400, peers: peers)
    }

    private func verdict(_ diagnosis: Diagnosis, _ name: String) -> Diagnosis.Verdict? {
        diagnosis.checks.first { $0.name == name }?.verdict
    }

    @Test func aHealthyMachineIsOk() {
        let bobPeer = DoctorFacts.Peer(id: "b0", nick: "bob", address: "192.168.1.40:7400", state: "alive", foundBy: "mdns", answered: true)
        let diagnosis = Diagnosis(facts(node: node(peers: [bobPeer])))
        #expect(diagnosis.summary == "ok")
        #expect(diagnosis.worst == .ok)
        #expect(diagnosis.checks.map(\.name) == ["mdns", "announcement", "interfaces", "firewall", "peers"])
        #expect(diagnosis.text().hasPrefix("doctor: ok\n"))
    }

    @Test func noDaemonComesFirstWithHowToStartOne() {
        let diagnosis = Diagnosis(facts(mdns: .noDaemon, firewall: .init(blocking: [
            .init(source: "iptables", text: "-A INPUT -p udp -m udp --dport 7400 -j DROP")
        ], read: ["iptables"])))
        #expect(diagnosis.summary.hasPrefix("no mDNS daemon answers"))
        #expect(diagnosis.summary.contains("sudo systemctl enable --now avahi-daemon"))
        #expect(verdict(diagnosis, "firewall") == .fail)
    }

    @Test func aDroppingRuleIsNamedWithTheCommandsToLetThePortIn() {
        let rule = DoctorFacts.Rule(source: "iptables", text: "-A INPUT -p udp -m udp --dport 7400 -j DROP")
        // A rule here comes before the peer it keeps out.
        let silent = DoctorFacts.Peer(id: "b0", nick: "bob", address: "192.168.1.40:7400", state: "gone", foundBy: "mdns", answered: false)
        let diagnosis = Diagnosis(facts(firewall: .init(blocking: [rule], read: ["iptables"]), node: node(peers: [silent])))
        #expect(diagnosis.summary.contains("-A INPUT -p udp -m udp --dport 7400 -j DROP"))
        #expect(diagnosis.summary.contains("sudo ufw allow 7400/udp"))
        #expect(diagnosis.worst == .fail)
    }

    @Test func unreadableRulesAreSaidNotGuessed() {
        let diagnosis = Diagnosis(facts(firewall: .init(unreadable: ["nftables: needs root"])))
        #expect(verdict(diagnosis, "firewall") == .unknown)
        #expect(diagnosis.checks.first { $0.name == "firewall" }?.fix == "sudo huddle doctor reads them")
        #expect(diagnosis.summary == "ok")
    }

    @Test func aRunningNodeWhoseAnnouncementDoesNotComeBackFails() {
        let diagnosis = Diagnosis(facts(mdns: .answers(announced: [bob]), node: node()))
        #expect(verdict(diagnosis, "announcement") == .fail)
        #expect(diagnosis.summary.contains("its announcement does not come back"))
    }

    @Test func anAnnouncedPeerThatNeverAnsweredIsNamed() {
        let silent = DoctorFacts.Peer(id: "b0", nick: "bob", address: "192.168.1.40:7400", state: "suspect", foundBy: "mdns", answered: false)
        let diagnosis = Diagnosis(facts(node: node(peers: [silent])))
        #expect(verdict(diagnosis, "peers") == .fail)
        #expect(diagnosis.summary.hasPrefix("bob (192.168.1.40:7400) announces itself but never answered"))
        // Given up on and forgotten by the node, still announced: named all the same.
        let forgotten = Diagnosis(facts(node: node()))
        #expect(forgotten.summary.hasPrefix("bob (192.168.1.40:7400) announces itself but never answered"))
    }

    /// Announced from an address on none of this computer's networks (a second router, a mesh's
    /// own subnet): said so, first, rather than blamed on a firewall; one on this network that
    /// never answered still is.
    @Test func aSilentPeerOnAnotherNetworkIsNamedAsSuch() {
        let carol = DoctorFacts.Announced(id: "c0", nick: "carol", address: "10.0.5.7:7400", protocolVersion: 5)
        let diagnosis = Diagnosis(facts(mdns: .answers(announced: [me, bob, carol]), node: node()))
        #expect(diagnosis.summary.hasPrefix(
            "carol (10.0.5.7:7400) announces itself from an address on none of this computer's networks "
                + "(192.168.1.0/24): a second router or a mesh's own network keeps you apart"))
        let peers = diagnosis.checks.first { $0.name == "peers" }?.detail ?? ""
        #expect(peers.contains("; bob (192.168.1.40:7400) announces itself but never answered: a firewall"))
        #expect(!peers.contains("carol (10.0.5.7:7400) announces itself but never answered"))
        #expect(Diagnosis.isOnLink("192.168.1.200:7400", of: [wifi]) == true)
        #expect(Diagnosis.isOnLink("192.168.2.1:7400", of: [wifi]) == false)
        #expect(Diagnosis.isOnLink("[fe80::1]:7400", of: [wifi]) == nil)
        #expect(Diagnosis.isOnLink("h2.local:7400", of: [wifi]) == nil)
    }

    @Test func anOlderProtocolSaysWhoShouldUpdate() {
        var old = bob
        old.protocolVersion = 4
        let diagnosis = Diagnosis(facts(mdns: .answers(announced: [me, old])))
        #expect(diagnosis.summary == "bob speaks protocol 4 and you 5: bob should update Huddle")
        // With a node running, which never made it a peer: still the protocol, never a firewall.
        let running = Diagnosis(facts(mdns: .answers(announced: [me, old]), node: node()))
        #expect(running.summary == "bob speaks protocol 4 and you 5: bob should update Huddle")
        #expect(!running.text().contains("never answered"))
    }

    /// At a terminal 60 columns wide every line fits, cut at spaces, and a check's words go on
    /// under its own start; piped, each check stays one line for scripts and grep.
    @Test func theTextFitsATerminalAndStaysOneLineACheckWhenPiped() {
        let rule = DoctorFacts.Rule(source: "iptables", text: "-A INPUT -p udp -m udp --dport 7400 -j DROP")
        let diagnosis = Diagnosis(facts(firewall: .init(blocking: [rule], read: ["iptables"])))
        let narrow = diagnosis.text(width: 60).split(separator: "\n").map(String.init)
        #expect(narrow.allSatisfy { $0.count <= 60 }, "\(narrow)")
        let firewall = narrow.firstIndex { $0.hasPrefix("  fail    firewall") }
        #expect(firewall != nil && narrow[firewall! + 1].hasPrefix(String(repeating: " ", count: 24)), "\(narrow)")
        let words = { (text: String) in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) }
        #expect(words(diagnosis.text(width: 60)) == words(diagnosis.text()))
        #expect(diagnosis.text().split(separator: "\n").count == diagnosis.checks.count + 1 + 1)  // + summary + the fix
        // A phone's page: no columns, the fix under its check.
        #expect(diagnosis.listText.contains("\nfail · firewall: a firewall rule here drops what friends send to port 7400"))
        #expect(diagnosis.listText.contains(")\n  → remove the rule or let the ports in"))
    }

    @Test func aVPNHoldingTheDefaultRouteAndAContainerBridgeAreWarnedOf() {
        let wg = DoctorFacts.Interface(name: "wg0", addresses: ["10.8.0.2/24"], kind: .tunnel)
        let vpn = Diagnosis(facts(interfaces: [wifi, wg], defaultRoute: "wg0"))
        #expect(verdict(vpn, "interfaces") == .warn)
        #expect(vpn.summary.hasPrefix("the default route goes through wg0, a VPN"))
        // A bridge beside two networks: which one is the friends' is the person's to say.
        let docker = DoctorFacts.Interface(name: "docker0", addresses: ["172.17.0.1/16"], kind: .containerBridge)
        let ethernet = DoctorFacts.Interface(name: "eth0", addresses: ["10.0.0.5/24"], kind: .lan)
        let bridged = Diagnosis(facts(interfaces: [docker, ethernet, wifi]))
        #expect(bridged.summary.contains("start Huddle with --interface eth0 (announces there only)"))
        #expect(bridged.summary.contains("allow-interfaces=eth0"))
        // Beside the one Wi-Fi, the node keeps its mDNS to the Wi-Fi by itself, and says so.
        let kept = Diagnosis.interfaces([docker, wifi], defaultRoute: "wlan0")
        #expect(kept.verdict == .ok)
        #expect(kept.detail == "friends reach you on wlan0 192.168.1.23/24 (mDNS there only: docker0 beside it is no "
            + "network of friends; --interface NAME picks another)")
        #expect(MachineNetwork.keptInterface(in: [docker, wifi]) == "wlan0")
        #expect(MachineNetwork.keptInterface(in: [docker, ethernet, wifi]) == nil)
        #expect(MachineNetwork.keptInterface(in: [wifi]) == nil)
    }

    @Test func anInterfaceChosenWithTheFlagIsCheckedAndSilencesWhatItFixes() {
        let docker = DoctorFacts.Interface(name: "docker0", addresses: ["172.17.0.1/16"], kind: .containerBridge)
        let ethernet = DoctorFacts.Interface(name: "eth0", addresses: ["10.0.0.5/24"], kind: .lan)
        // On the Wi-Fi only: the bridge and the second network no longer matter to the node.
        let kept = Diagnosis.interfaces([docker, ethernet, wifi], defaultRoute: "wlan0", chosen: "wlan0")
        #expect(kept.verdict == .ok)
        #expect(kept.detail == "friends reach you on wlan0 192.168.1.23/24 (--interface: mDNS there only)")
        #expect(Diagnosis.interfaces([docker, ethernet, wifi], defaultRoute: "wlan0").verdict == .warn)
        // Kept to the bridge: nobody on the Wi-Fi finds it, and the flag to give instead.
        let wrong = Diagnosis.interfaces([docker, wifi], defaultRoute: "wlan0", chosen: "docker0")
        #expect(wrong.verdict == .warn)
        #expect(wrong.detail.hasPrefix("the node keeps to docker0 (--interface), a bridge for containers"))
        #expect(wrong.fix == "start it with --interface wlan0 (you are on wlan0 192.168.1.23/24)")
        // Kept to an interface that went away.
        let gone = Diagnosis.interfaces([wifi], defaultRoute: "wlan0", chosen: "wlan1")
        #expect(gone.verdict == .fail)
        #expect(gone.detail == "the node keeps to wlan1 (--interface), which has no address now: nobody finds it")
        // A running node's status carries the flag to `huddle doctor`.
        var keptToDocker = node()
        keptToDocker.interface = "docker0"
        #expect(verdict(Diagnosis(facts(interfaces: [docker, wifi], node: keptToDocker)), "interfaces") == .warn)
    }

    @Test func theAddressToTellIsTheWiFisNotAVPNsOrABridgesWhateverComesFirst() {
        let docker = DoctorFacts.Interface(name: "docker0", addresses: ["172.17.0.1/16"], kind: .containerBridge)
        let wg = DoctorFacts.Interface(name: "wg0", addresses: ["10.8.0.2/24"], kind: .tunnel)
        let ethernet = DoctorFacts.Interface(name: "eth0", addresses: ["10.0.0.5/24"], kind: .lan)
        let all = [docker, wg, ethernet, wifi]
        #expect(MachineNetwork.preferredAddress(in: all, defaultRoute: "wg0", chosen: nil) == "10.0.0.5")
        #expect(MachineNetwork.preferredAddress(in: all, defaultRoute: "wlan0", chosen: nil) == "192.168.1.23")
        #expect(MachineNetwork.preferredAddress(in: all, defaultRoute: nil, chosen: "wlan0") == "192.168.1.23")
        #expect(MachineNetwork.preferredAddress(in: all, defaultRoute: nil, chosen: "docker0") == "172.17.0.1")
        #expect(MachineNetwork.preferredAddress(in: [docker, wg], defaultRoute: "wg0", chosen: nil) == "172.17.0.1")
        #expect(MachineNetwork.preferredAddress(in: [], defaultRoute: nil, chosen: nil) == nil)
    }

    @Test func twoSubnetsAndNobodyAnnouncingAreWarnings() {
        let ethernet = DoctorFacts.Interface(name: "eth0", addresses: ["10.0.0.5/24"], kind: .lan)
        #expect(verdict(Diagnosis(facts(interfaces: [ethernet, wifi])), "interfaces") == .warn)
        let alone = Diagnosis(facts(mdns: .answers(announced: [me]), node: node()))
        #expect(alone.summary.hasPrefix("the mDNS daemon answers, but no other Huddle node announces itself"))
        #expect(alone.worst == .warn)
    }

    @Test func aNodeRunWithNoMDNSIsToldSoAndNotThatMDNSIsBroken() {
        // bob announces himself; alice runs with --no-mdns, so she never looked for him and her
        // own announcement is not out there either.
        var alice = node()
        alice.mdnsOff = true
        let diagnosis = Diagnosis(facts(mdns: .answers(announced: [bob]), node: alice))
        #expect(verdict(diagnosis, "mdns") == .warn)
        let mdns = diagnosis.checks.first { $0.name == "mdns" }
        #expect(mdns?.detail.contains("alice runs with --no-mdns") == true)
        #expect(mdns?.detail.contains("bob announces itself here and would be found") == true)
        #expect(mdns?.fix == "start huddle again without --no-mdns")
        #expect(!diagnosis.checks.contains { $0.name == "announcement" })
        #expect(verdict(diagnosis, "peers") == .ok)
        #expect(diagnosis.summary.contains("--no-mdns"))

        // Without a daemon as well, both are said, and both fixes.
        let bare = Diagnosis(facts(mdns: .noDaemon, node: alice))
        let check = bare.checks.first { $0.name == "mdns" }
        #expect(check?.detail.contains("no mDNS daemon answers on this machine either") == true)
        #expect(check?.fix == "sudo systemctl enable --now avahi-daemon, then start huddle again without --no-mdns")

        // The same facts with mDNS on: bob announced and never reached is what is wrong.
        let on = Diagnosis(facts(mdns: .answers(announced: [me, bob]), node: node()))
        #expect(verdict(on, "peers") == .fail)
    }

    @Test func interfaceNamesSayWhatTheyAre() {
        #expect(DoctorFacts.Interface.kind(ofName: "tailscale0") == .tunnel)
        #expect(DoctorFacts.Interface.kind(ofName: "wg0") == .tunnel)
        #expect(DoctorFacts.Interface.kind(ofName: "docker0") == .containerBridge)
        #expect(DoctorFacts.Interface.kind(ofName: "virbr0") == .containerBridge)
        #expect(DoctorFacts.Interface.kind(ofName: "wlp2s0") == .lan)
        #expect(Diagnosis.subnet("192.168.1.23/24") == "192.168.1.0/24")
        #expect(MachineNetwork.prefixLength("255.255.240.0") == 20)
    }

    @Test func theDefaultRouteIsReadFromTheKernelsTable() {
        let table = """
            Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
            wlan0\t0001A8C0\t00000000\t0001\t0\t0\t600\t00FFFFFF\t0\t0\t0
            wg0\t00000000\t00000000\t0001\t0\t0\t0\t00000000\t0\t0\t0
            """
        #expect(MachineNetwork.defaultRoute(inTable: table) == "wg0")
    }

    @Test func firewallRulesThatDropThePortOrMDNSAreFoundAndAcceptedOnesAreNot() {
        let dropping = """
            *filter
            :INPUT ACCEPT [0:0]
            -A INPUT -p udp -m udp --dport 7400 -j DROP
            -A INPUT -p udp -m udp --dport 5353 -j REJECT --reject-with icmp-port-unreachable
            -A INPUT -p tcp -m tcp --dport 22 -j DROP
            COMMIT
            """
        #expect(FirewallRules.blockingIPTables(dropping, port: 7400) == [
            "-A INPUT -p udp -m udp --dport 7400 -j DROP",
            "-A INPUT -p udp -m udp --dport 5353 -j REJECT --reject-with icmp-port-unreachable",
        ])
        #expect(FirewallRules.blockingIPTables(dropping, port: 74) == [
            "-A INPUT -p udp -m udp --dport 5353 -j REJECT --reject-with icmp-port-unreachable"
        ])
        let ufwLike = ":INPUT DROP [0:0]\n-A ufw-user-input -p udp -m udp --dport 7400 -j ACCEPT\n"
        #expect(FirewallRules.blockingIPTables(ufwLike, port: 7400) == [])
        #expect(FirewallRules.blockingIPTables(ufwLike, port: 7500) == [":INPUT DROP [0:0]"])
        let nft = """
            table inet filter {
                chain input {
                    type filter hook input priority filter; policy drop;
                    udp dport 5353 accept
                }
            }
            """
        #expect(FirewallRules.blockingNFT(nft, port: 7400) == ["type filter hook input priority filter; policy drop;"])
    }
}
