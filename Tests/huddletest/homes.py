"""Two homes joined by a router, from Python: for the tests of friends who watch from two homes
(issue 22). Each home is a bridge with its own hosts; the router forwards between them.

    home A: a1 10.77.1.11, a2 10.77.1.12  ─ brA 10.77.1.1 ┐
                                                          router (namespace huddle-TAG-rt)
    home B: b1 10.77.2.11, b2 10.77.2.12  ─ brB 10.77.2.1 ┘

Modes:
- ``route``: plain routing, both ways.
- ``nat``: home B is behind a NAT, as most homes are: what leaves it toward home A takes the
  router's address (10.77.1.1) and a port from 40000-49999 (never the one it had, so an answer
  to a node's announced port dies at the router, as with a Linux NAT whose port was taken), and
  nothing from home A starts a conversation into home B.
- ``strict``: as ``nat``, plus the one port forward friends set up (the router's 10.77.1.1:7400,
  UDP and TCP, goes to b1:7400), and a firewall that drops everything between a2 and b2 in both
  directions, whatever the connection tracking says: the two nodes that do not bridge the homes
  cannot reach each other at all, and only a relay (a1 or b1) can carry what they say.

No avahi here (mDNS stays inside a home anyway; friends in two homes connect with `--peer`), and
nothing multicasts: every address is in 10.77.0.0/16, inside namespaces made here. Every namespace
made is named huddle-TAG-*, and only those are removed; processes still running in them are
killed by pid (``ip netns pids``) first.

    python3 -m huddletest.homes up strict [--tag hm]   # Scripts/homes wraps this
    python3 -m huddletest.homes down [--tag hm]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

HOSTS = {"a1": ("A", "10.77.1.11"), "a2": ("A", "10.77.1.12"), "b1": ("B", "10.77.2.11"), "b2": ("B", "10.77.2.12")}
GATEWAYS = {"A": "10.77.1.1", "B": "10.77.2.1"}
MODES = ("route", "nat", "strict")
#: In ``strict`` mode, the router's address and port that home A's nodes name with --peer to reach b1.
FORWARDED = ("10.77.1.1", 7400)
#: Who names whom with --peer, as friends would: the one link between the homes is b1 -> a1 (home B
#: starts it through its NAT), or, in strict mode, a1 -> the forwarded port; inside a home the other
#: node names its housemate (mDNS would find it; there is no avahi here). a1 and b1 bridge the homes.
SEEDS = {
    "route": {"a1": [], "a2": ["10.77.1.11:7400"], "b1": ["10.77.1.11:7400"], "b2": ["10.77.2.11:7400"]},
    "nat": {"a1": [], "a2": ["10.77.1.11:7400"], "b1": ["10.77.1.11:7400"], "b2": ["10.77.2.11:7400"]},
    "strict": {"a1": ["10.77.1.1:7400"], "a2": ["10.77.1.11:7400"], "b1": [], "b2": ["10.77.2.11:7400"]},
}


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(args, check=check, capture_output=True, text=True)


class Homes:
    def __init__(self, tag: str = "hm", mode: str = "nat"):
        if mode not in MODES:
            raise ValueError(f"no mode {mode!r} ({', '.join(MODES)})")
        self.tag = tag
        self.mode = mode
        self.router = f"huddle-{tag}-rt"

    def ns(self, host: str) -> str:
        return f"huddle-{self.tag}-{host}"

    def on_host(self, host: str) -> list[str]:
        """The prefix that runs a command on `host` (it execs: the command keeps its pid)."""
        return ["ip", "netns", "exec", self.ns(host)]

    def address(self, host: str) -> str:
        return HOSTS[host][1]

    def seeds(self, host: str) -> list[str]:
        """The --peer addresses `host`'s node is given in this mode (see SEEDS)."""
        return list(SEEDS[self.mode][host])

    def in_router(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return sh("ip", "netns", "exec", self.router, *args, check=check)

    def add_host(self, host: str, home: str, address: str) -> None:
        """Host `host`: a namespace of its own at `address` on home `home`'s bridge, routed by
        the router."""
        ns = self.ns(host)
        sh("ip", "netns", "add", ns)
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        # Made in the host, the router's end moved across: names are per namespace.
        sh("ip", "-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", f"v{host}")
        sh("ip", "-n", ns, "link", "set", f"v{host}", "netns", self.router)
        self.in_router("ip", "link", "set", f"v{host}", "master", f"br{home}")
        self.in_router("ip", "link", "set", f"v{host}", "up")
        sh("ip", "-n", ns, "addr", "add", f"{address}/24", "dev", "eth0")
        sh("ip", "-n", ns, "link", "set", "eth0", "up")
        sh("ip", "-n", ns, "route", "add", "default", "via", GATEWAYS[home])

    def up(self) -> "Homes":
        self.down()
        sh("ip", "netns", "add", self.router)
        self.in_router("ip", "link", "set", "lo", "up")
        self.in_router("sysctl", "-qw", "net.ipv4.ip_forward=1")
        for home, gateway in GATEWAYS.items():
            bridge = f"br{home}"
            self.in_router("ip", "link", "add", bridge, "type", "bridge")
            self.in_router("ip", "addr", "add", f"{gateway}/24", "dev", bridge)
            self.in_router("ip", "link", "set", bridge, "up")
        for host, (home, address) in HOSTS.items():
            self.add_host(host, home, address)
        if self.mode == "strict":
            # Dropped before anything else, new or established: a2 and b2 never meet.
            for src, dst in (("a2", "b2"), ("b2", "a2")):
                self.in_router("iptables", "-A", "FORWARD", "-s", self.address(src), "-d", self.address(dst), "-j",
                               "DROP")
            # The one port forward: the router's 7400 (UDP and TCP) is b1's.
            host, port = FORWARDED
            for proto in ("udp", "tcp"):
                self.in_router("iptables", "-t", "nat", "-A", "PREROUTING", "-d", host, "-p", proto, "--dport",
                               str(port), "-j", "DNAT", "--to-destination", f"{self.address('b1')}:{port}")
                self.in_router("iptables", "-A", "FORWARD", "-i", "brA", "-o", "brB", "-d", self.address("b1"), "-p",
                               proto, "--dport", str(port), "-j", "ACCEPT")
        if self.mode in ("nat", "strict"):
            self.in_router("iptables", "-t", "nat", "-A", "POSTROUTING", "-s", "10.77.2.0/24", "-o", "brA",
                           "-p", "udp", "-j", "MASQUERADE", "--to-ports", "40000-49999")
            self.in_router("iptables", "-t", "nat", "-A", "POSTROUTING", "-s", "10.77.2.0/24", "-o", "brA",
                           "-j", "MASQUERADE")
            self.in_router("iptables", "-A", "FORWARD", "-i", "brA", "-o", "brB", "-m", "conntrack",
                           "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT")
            self.in_router("iptables", "-A", "FORWARD", "-i", "brA", "-o", "brB", "-j", "DROP")
        return self

    @staticmethod
    def wait_until_peers(a, b, timeout: float = 10) -> float | None:
        """Seconds until nodes `a` and `b` (huddletest.node.Node) each list the other as an alive
        peer in `huddle status` (not just its join, which anti-entropy through a third node brings
        first); None if they do not within `timeout`."""
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            if all(any(p["nick"] == other.name and p["state"] == "alive" for p in node.status()["peers"])
                   for node, other in ((a, b), (b, a))):
                return time.monotonic() - started
            time.sleep(0.1)
        return None

    def flush_connections(self) -> None:
        """What a router reboot does to the NAT: every mapping forgotten (conntrack -F)."""
        self.in_router("conntrack", "-F", check=False)

    def cut(self, host: str) -> None:
        """Takes the host's link to its home down (a cable pulled, Wi-Fi gone)."""
        self.in_router("ip", "link", "set", f"v{host}", "down")

    def restore(self, host: str) -> None:
        self.in_router("ip", "link", "set", f"v{host}", "up")

    def namespaces(self) -> list[str]:
        return [self.ns(host) for host in HOSTS] + [self.router]

    def down(self) -> None:
        """Kills what still runs in this bed's namespaces (by pid), then removes them."""
        existing = set(sh("ip", "netns", "list", check=False).stdout.split())
        for ns in self.namespaces():
            if ns not in existing:
                continue
            pids = sh("ip", "netns", "pids", ns, check=False).stdout.split()
            for pid in pids:
                sh("kill", "-TERM", pid, check=False)
            if pids:
                time.sleep(0.5)
                for pid in sh("ip", "netns", "pids", ns, check=False).stdout.split():
                    sh("kill", "-KILL", pid, check=False)
            sh("ip", "netns", "del", ns, check=False)

    def __enter__(self) -> "Homes":
        return self.up()

    def __exit__(self, *exc) -> None:
        self.down()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="homes", description="two homes joined by a router (network namespaces)")
    parser.add_argument("--tag", default="hm", help="namespaces huddle-TAG-* (1-8 of [a-z0-9]; default hm)")
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="build the two homes (any bed of this tag is removed first)")
    up.add_argument("mode", choices=MODES)
    sub.add_parser("down", help="kill what runs in the bed (by pid) and remove its namespaces")
    for name in ("cut", "restore"):
        sub.add_parser(name).add_argument("host", choices=sorted(HOSTS))
    sub.add_parser("flush", help="forget every NAT mapping, as a router reboot does")
    sub.add_parser("ns", help="print the namespace of a host").add_argument("host", choices=sorted(HOSTS) + ["router"])
    seeds = sub.add_parser("seeds", help="print the --peer addresses a host's node gets in a mode")
    seeds.add_argument("mode", choices=MODES)
    seeds.add_argument("host", choices=sorted(HOSTS))
    args = parser.parse_args(argv)
    if not (1 <= len(args.tag) <= 8 and args.tag.isalnum() and args.tag.islower() or args.tag.isdigit()):
        parser.error("--tag must be 1-8 characters of [a-z0-9]")
    bed = Homes(args.tag, getattr(args, "mode", "nat"))
    if args.command == "up":
        try:
            bed.up()
        except subprocess.CalledProcessError as error:
            bed.down()
            print(f"homes: {' '.join(error.cmd)} failed: {error.stderr.strip()}", file=sys.stderr)
            return 1
    elif args.command == "down":
        bed.down()
    elif args.command == "cut":
        bed.cut(args.host)
    elif args.command == "restore":
        bed.restore(args.host)
    elif args.command == "flush":
        bed.flush_connections()
    elif args.command == "seeds":
        print(" ".join(bed.seeds(args.host)))
    elif args.command == "ns":
        print(bed.router if args.host == "router" else bed.ns(args.host))
    return 0


if __name__ == "__main__":
    sys.exit(main())
