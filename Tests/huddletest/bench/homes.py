"""Figure 14: friends in two homes (issue 22), on the two-homes bed (huddletest.homes, root only):
four nodes started as friends would (Homes.seeds), in each mode; the two nodes that do not bridge
the homes, a2 and b2, take turns writing once they are each other's peers (or after 10 s); sent -> shown between them (p50/p99/max), and how many
were missing or shown twice. route and nat: the pair talks directly; strict: the pair cannot
reach each other at all, so the target (two link delays) needs the relay (NodeMachine+Relay). Then five router reboots (conntrack -F) per
mode, each followed by one message each way: how long until it is shown."""

from __future__ import annotations

import os
import shutil
import time

from ..homes import Homes
from .harness import BenchNode, Table, log, ms3, pct, stop_node, temp_dir

NAMES = {"a1": "alice", "a2": "anna", "b1": "bob", "b2": "bea"}


def bench_homes(binary: str, count: int, table: Table, modes: tuple[str, ...] = ("route", "nat", "strict")) -> None:
    if os.geteuid() != 0:
        table.add("two homes", "skipped", "needs root (network namespaces): sudo Scripts/bench --only homes")
        return
    if shutil.which("iptables") is None or shutil.which("conntrack") is None:
        table.add("two homes", "skipped", "needs iptables and conntrack (Scripts/bootstrap --test installs them)")
        return
    for mode in modes:
        bench_mode(binary, mode, count, table)
    table.note("two homes: bridges brA and brB in a router namespace, hosts a1 a2 | b1 b2 (huddletest.homes, "
               "Scripts/homes); nat: home B masqueraded to a port never its own; strict: nat plus one port "
               "forward to b1 and a2 <-> b2 dropped both ways. a2 and b2 alternate, 100 ms apart; samples are "
               "shown_at - sent_at on the reader (one machine, one clock); strict goes through a relay (a1 or b1). "
               "A reboot's heal: from conntrack -F until the message said just after it is shown on the far node.")


def flush_heals(bed: Homes, nodes: dict, mode: str, flushes: int = 5) -> list[float]:
    """Seconds from each flush of the router's connection tracking (what a reboot does to a NAT)
    until a message said right after it is shown on the far node, a2 -> b2 then b2 -> a2; flushes
    2.3 s apart and more, so they fall anywhere in the nodes' periods. 10 s if it never arrives."""
    heals = []
    for n in range(flushes):
        for writer, reader in (("a2", "b2"), ("b2", "a2")):
            time.sleep(2.3 + 0.37 * n)
            text = f"{mode} flush {n} {writer}"
            started = time.monotonic()
            bed.flush_connections()
            nodes[writer].say(text)
            try:
                nodes[reader].message(text, timeout=10)
                heals.append(time.monotonic() - started)
            except AssertionError:
                heals.append(10.0)
    log(f"{mode}: flush heals " + ", ".join(f"{h:.2f}" for h in heals) + " s")
    return heals


def bench_mode(binary: str, mode: str, count: int, table: Table) -> None:
    base = temp_dir(f"homes-{mode}")
    bed = Homes(os.environ.get("HUDDLE_BENCH_HOMES_TAG", "bh"), mode)
    nodes: dict[str, BenchNode] = {}
    try:
        bed.up()
        started = time.monotonic()
        for host in ("a1", "b1", "a2", "b2"):
            nodes[host] = BenchNode(binary, NAMES[host], base / NAMES[host], port=7400, launcher=bed.on_host(host),
                                    host_address=bed.address(host), peers=bed.seeds(host))
        for host, node in nodes.items():
            for other in nodes:
                if other != host:
                    node.wait_for(lambda o, n=NAMES[other]: o["type"] == "join" and o["nick"] == n, timeout=30,
                                  what=f"{NAMES[other]}'s join on {host} ({mode})")
        met = time.monotonic() - started
        # Their joins come through a third node first; measure once they are each other's peers.
        peered = Homes.wait_until_peers(nodes["a2"], nodes["b2"])
        log(f"{mode}: all four met in {met:.1f} s, a2 and b2 peers "
            f"{'after %.1f s more' % peered if peered is not None else 'never'}; "
            f"{count} messages each way between a2 and b2, 100 ms apart")
        texts = {"a2": [], "b2": []}
        for i in range(count):
            for host in ("a2", "b2"):
                text = f"{mode} {host} {i}"
                nodes[host].say(text)
                texts[host].append(text)
            time.sleep(0.1)
        results = {}
        for writer, reader in (("a2", "b2"), ("b2", "a2")):
            try:
                nodes[reader].message(texts[writer][-1], timeout=15)
            except AssertionError:
                pass
            time.sleep(1.0)
            shown = [o for o in nodes[reader].messages() if o["text"] in set(texts[writer])]
            seen = [o["text"] for o in shown]
            results[(writer, reader)] = ([o["shown_at"] - o["sent_at"] for o in shown],
                                         len(set(texts[writer]) - set(seen)), len(seen) - len(set(seen)))
        for (writer, reader), (delays, missing, twice) in results.items():
            ok = bool(delays) and pct(delays, 99) <= 50 and missing == 0 and twice == 0
            table.add(f"two homes, {mode}: {writer} -> {reader}, p50 / p99 / max", ms3(delays) if delays else "none",
                      f"target p99 <= 50 ms, none lost or twice ({missing} lost, {twice} twice)", ok)
        table.add(f"two homes, {mode}: all four joined on every node, from the first start; then a2 and b2 peers",
                  f"{met:.1f} s; " + (f"+{peered:.1f} s" if peered is not None else "never"), "info")
        heals = flush_heals(bed, nodes, mode)
        table.add(f"two homes, {mode}: {len(heals)} router reboots (conntrack -F), each followed by one message "
                  f"a2 -> b2 then b2 -> a2: said -> shown, min / median / max",
                  " / ".join(f"{v:.2f}" for v in (min(heals), sorted(heals)[len(heals) // 2], max(heals))) + " s",
                  "target <= 3 s", max(heals) <= 3)
    finally:
        for node in nodes.values():
            stop_node(node)
        bed.down()
