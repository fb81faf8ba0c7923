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

No avahi here (mDNS stays inside a home anyway; friends in two homes connect with `--peer`).
Every namespace made is named huddle-TAG-*, and only those are removed.
"""

from __future__ import annotations

import subprocess

HOSTS = {"a1": ("A", "10.77.1.11"), "a2": ("A", "10.77.1.12"), "b1": ("B", "10.77.2.11"), "b2": ("B", "10.77.2.12")}
GATEWAYS = {"A": "10.77.1.1", "B": "10.77.2.1"}


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(args, check=check, capture_output=True, text=True)


class Homes:
    def __init__(self, tag: str = "hm", mode: str = "nat"):
        if mode not in ("route", "nat"):
            raise ValueError(f"no mode {mode!r} (route or nat)")
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

    def in_router(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return sh("ip", "netns", "exec", self.router, *args, check=check)

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
        if self.mode == "nat":
            self.in_router("iptables", "-t", "nat", "-A", "POSTROUTING", "-s", "10.77.2.0/24", "-o", "brA",
                           "-p", "udp", "-j", "MASQUERADE", "--to-ports", "40000-49999")
            self.in_router("iptables", "-t", "nat", "-A", "POSTROUTING", "-s", "10.77.2.0/24", "-o", "brA",
                           "-j", "MASQUERADE")
            self.in_router("iptables", "-A", "FORWARD", "-i", "brA", "-o", "brB", "-m", "conntrack",
                           "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT")
            self.in_router("iptables", "-A", "FORWARD", "-i", "brA", "-o", "brB", "-j", "DROP")
        return self

    def flush_connections(self) -> None:
        """What a router reboot does to the NAT: every mapping forgotten (conntrack -F)."""
        self.in_router("conntrack", "-F", check=False)

    def down(self) -> None:
        for host in HOSTS:
            sh("ip", "netns", "del", self.ns(host), check=False)
        sh("ip", "netns", "del", self.router, check=False)

    def __enter__(self) -> "Homes":
        return self.up()

    def __exit__(self, *exc) -> None:
        self.down()
