"""Figure 11: peers that flap. False "not answering" / "gone" per node-hour among nodes that all
stay up, on loopback with two busy loops hogging both CPU cores (issue 17, point 5), and the time
each node then takes to report a SIGKILLed node gone, the hogs still running; then the same on a
simulated LAN (Scripts/lan, root only) whose three hosts drop 20 % of what they receive.

    Scripts/bench --only flap                       # 5 minutes under the hogs, 5 on the lossy LAN
    HUDDLE_BENCH_FLAP_SECONDS=60 Scripts/bench --only flap

The LAN part brings up its own bed under HUDDLE_LAN_TAG=lg (not the other parts' "bench"), so it
cannot collide with anyone else's bed, and tears it down again.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from .harness import LIVE_PROCS, ROOM, BenchNode, Table, log, start_mesh, stop_node, temp_dir
from ..lan import Bed
from ..processes import stop_process

HOG = "while True:\n    pass\n"


def alarms_since(node, start: int, about: set[str]) -> list[dict]:
    """The "not answering" / "gone" lines `node` printed from output index `start` on about
    the ids in `about`."""
    return [o for o in list(node.outputs)[start:]
            if o.get("type") == "peer" and o.get("state") in ("suspect", "gone") and o.get("id") in about]


def kill_and_time(victim, watchers, marks: list[int], timeout: float = 30) -> list[float]:
    """SIGKILLs `victim` and returns, for each watcher, the seconds until it printed the victim
    gone (looking at its output from `marks` on), or infinity if it did not within `timeout`."""
    killed_ns = time.time_ns()
    victim.kill9()
    stop_node(victim)
    deadline = time.monotonic() + timeout
    reported: list[float] = []
    for node, mark in zip(watchers, marks):
        seen = None
        while seen is None and time.monotonic() < deadline:
            seen = next((o for o in list(node.outputs)[mark:]
                         if o.get("type") == "peer" and o.get("id") == victim.id and o.get("state") == "gone"), None)
            if seen is None:
                time.sleep(0.05)
        reported.append((seen["_rx_ns"] - killed_ns) / 1e9 if seen else float("inf"))
    return reported


def bench_flap(binary: str, seconds: float, table: Table, hogs: int = 2) -> None:
    """Four nodes meshed on loopback (`alice`, `bob`, `carol` and `dave`); then `hogs` busy-loop
    processes, one per core, for `seconds`: every state change a node prints about another is a
    false alarm (all are up). Then dave is SIGKILLed, hogs still running: how long until each
    of the other three prints him gone."""
    base = temp_dir("flap")
    names = ["alice", "bob", "carol", "dave"]
    nodes = start_mesh(binary, names, base)
    procs: list[subprocess.Popen] = []
    try:
        ids = {n.name: n.id for n in nodes}
        start = [len(n.outputs) for n in nodes]
        log(f"{len(nodes)} nodes meshed; {hogs} busy loops on {os.cpu_count()} cores for {seconds:.0f} s")
        for _ in range(hogs):
            proc = subprocess.Popen([sys.executable, "-c", HOG])
            procs.append(proc)
            LIVE_PROCS.append(proc)
        began = time.monotonic()
        time.sleep(seconds)
        hogged = time.monotonic() - began
        false = [(n.name, o) for n, s in zip(nodes, start) for o in alarms_since(n, s, set(ids.values()))]
        node_hours = len(nodes) * hogged / 3600
        per_hour = len(false) / node_hours
        table.add(f"busy machine ({hogs} busy loops, {os.cpu_count()} cores): false not answering / gone, "
                  f"{len(nodes)} nodes for {hogged:.0f} s",
                  f"{len(false)} ({per_hour:.1f} per node-hour)", "target 0", not false)
        for name, o in false[:10]:
            log(f"false alarm: {name} says {o.get('nick')} is {o.get('state')}")

        # The kill, the hogs still running.
        victim, watchers = nodes[-1], nodes[:-1]
        marks = [len(n.outputs) for n in watchers]
        reported = kill_and_time(victim, watchers, marks)
        others = [(n.name, o) for n, m in zip(watchers, marks)
                  for o in alarms_since(n, m, {ids[w.name] for w in watchers})]
        slowest = max(reported)
        table.add("busy machine: a SIGKILLed node reported gone by the 3 others (each / slowest)",
                  " / ".join(f"{r:.1f}" for r in sorted(reported)) + " s",
                  "target <= 10 s, no other alarm", slowest <= 10 and not others)
        table.note(f"busy machine: {len(nodes)} nodes on loopback ({binary}), meshed, then {hogs} Python busy loops "
                   f"(`while True: pass`) for {hogged:.0f} s; false alarms = 'not answering' or 'gone' printed "
                   f"about a node that was up ({len(false)} in {node_hours * 60:.1f} node-minutes); then dave was "
                   f"SIGKILLed with the loops still running ({len(others)} alarms about the live ones meanwhile).")
    finally:
        for proc in procs:
            stop_process(proc)
            if proc in LIVE_PROCS:
                LIVE_PROCS.remove(proc)
        for node in nodes:
            stop_node(node)


def bench_flap_lan(binary: str, seconds: float, table: Table, percent: int = 20, tag: str = "lg") -> None:
    """Three hosts of a simulated LAN (our own bed, HUDDLE_LAN_TAG=`tag`), found over mDNS; then
    every host drops `percent` % of the packets it receives for `seconds`: every "not answering"
    or "gone" is a false alarm. Then h3's node is SIGKILLed, the loss still on."""
    label = f"lossy LAN, {percent} % loss"
    if os.geteuid() != 0:
        table.add(f"{label}: false alarms", "skipped", "needs root (network namespaces)")
        return
    bed = Bed(tag)
    up = bed.run("up", "3", check=False)
    if up.returncode != 0:
        table.add(f"{label}: false alarms", "skipped", f"Scripts/lan up 3 (tag {tag}): {up.stderr.strip()[-300:]}")
        if "already up" not in up.stderr:
            bed.down()
        return
    base = temp_dir("flap-lan")
    nodes: list[BenchNode] = []
    try:
        names = {"h1": "alice", "h2": "bob", "h3": "carol"}
        for host, name in names.items():
            nodes.append(BenchNode(binary, name, base / name, room=ROOM, mdns=True, launcher=bed.on_host(host),
                                   host_address=bed.address(host)))
        for node in nodes:
            for other in names.values():
                if other != node.name:
                    node.wait_for(lambda o, n=other: o["type"] == "join" and o["nick"] == n, timeout=30,
                                  what=f"{other}'s join over mDNS")
        for host in names:
            bed.run("loss", host, str(percent))
        ids = {n.id for n in nodes}
        start = [len(n.outputs) for n in nodes]
        log(f"3 hosts dropping {percent} % of what they receive, for {seconds:.0f} s")
        began = time.monotonic()
        time.sleep(seconds)
        lossy = time.monotonic() - began
        false = [o for n, s in zip(nodes, start) for o in alarms_since(n, s, ids)]
        node_hours = len(nodes) * lossy / 3600
        table.add(f"{label}: false not answering / gone, 3 nodes for {lossy:.0f} s",
                  f"{len(false)} ({len(false) / node_hours:.1f} per node-hour)", "target 0", not false)

        victim, watchers = nodes[-1], nodes[:-1]
        marks = [len(n.outputs) for n in watchers]
        reported = kill_and_time(victim, watchers, marks)
        table.add(f"{label}: a SIGKILLed node reported gone by the 2 others",
                  " / ".join(f"{r:.1f}" for r in sorted(reported)) + " s", "target <= 10 s", max(reported) <= 10)
        table.note(f"lossy LAN (flap): Scripts/lan bed '{tag}', 3 hosts each dropping {percent} % of incoming "
                   f"packets (iptables statistic match) for {lossy:.0f} s after the nodes met over mDNS; "
                   f"{len(false)} false alarms in {node_hours * 60:.1f} node-minutes; then carol (h3) SIGKILLed.")
    finally:
        for node in nodes:
            stop_node(node)
        down = bed.down()
        if down.returncode != 0:
            log(f"Scripts/lan down (tag {tag}) exited {down.returncode}: {down.stderr.strip()[-300:]}")
