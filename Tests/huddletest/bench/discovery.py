"""Figure 6: discovery over mDNS on a simulated LAN (Scripts/lan, root only): a new node on h1
listed by the node on h2, beside avahi-publish on h1 -> a running avahi-browse on h2 resolving it."""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import threading
import time
from pathlib import Path

from ..processes import stop_process
from .harness import (BED, LIVE_PROCS, BenchNode, Table, lan_down, lan_up, log, on_host, stop_node, temp_dir,
                      wait_until)


class LineWatcher:
    """A long-running process whose stdout (and stderr) lines are kept with the wall-clock time
    (ns) this script read them."""

    def __init__(self, args: list[str]):
        self.lines: list[tuple[int, str]] = []
        self.changed = threading.Condition()
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True, bufsize=1)
        LIVE_PROCS.append(self.process)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            rx = time.time_ns()
            with self.changed:
                self.lines.append((rx, line.rstrip("\n")))
                self.changed.notify_all()

    def first(self, predicate, after_ns: int = 0) -> int | None:
        """Time of the first line read at or after `after_ns` that matches."""
        with self.changed:
            return next((t for t, line in self.lines if t >= after_ns and predicate(line)), None)

    def wait(self, predicate, after_ns: int, timeout: float) -> int | None:
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                found = next((t for t, line in self.lines if t >= after_ns and predicate(line)), None)
                remaining = deadline - time.monotonic()
                if found is not None or remaining <= 0:
                    return found
                self.changed.wait(remaining)

    def stop(self) -> None:
        stop_process(self.process)
        if self.process in LIVE_PROCS:
            LIVE_PROCS.remove(self.process)


def avahi_unescape(text: str) -> str:
    """avahi-browse -p writes `\\DDD` (decimal) for spaces and punctuation, `\\.` and `\\\\`."""
    return re.sub(r"\\(\d{3}|.)", lambda m: chr(int(m.group(1))) if len(m.group(1)) == 3 else m.group(1), text)


def browse_line(kind: str, name: str):
    """Matches an `avahi-browse -p` line of `kind` (`+`, `=`, `-`) for service instance `name`."""
    def match(line: str) -> bool:
        fields = line.split(";")
        return len(fields) > 4 and fields[0] == kind and fields[2] == "IPv4" and avahi_unescape(fields[3]) == name
    return match


def stamped_log(path: Path) -> list[tuple[int, str]]:
    """A node's stderr as written through STAMP: (ns, text) per line."""
    lines = []
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return lines
    for line in text.splitlines():
        head, _, rest = line.partition(" ")
        try:
            lines.append((int(float(head) * 1e9), rest))
        except ValueError:
            continue
    return lines


def first_logged(path: Path, *needles: str) -> int | None:
    return next((t for t, text in stamped_log(path) if all(n in text for n in needles)), None)


def first_output(node: "BenchNode", predicate, after_ns: int = 0) -> dict | None:
    return next((o for o in list(node.outputs) if o.get("_rx_ns", 0) >= after_ns and predicate(o)), None)


def secs3(values: list[float]) -> str:
    if not values:
        return "n/a"
    return f"{statistics.median(values):.3f} / {min(values):.3f} / {max(values):.3f} s"


def discovery_skip(table: Table, why: str) -> None:
    log(f"discovery over mDNS SKIPPED: {why}")
    table.add("discovery over mDNS (simulated LAN)", "skipped", "see note")
    table.note(f"discovery over mDNS SKIPPED: {why}")


def bench_discovery(binary: str, trials: int, table: Table) -> None:
    if os.geteuid() != 0:
        discovery_skip(table, f"needs root for the network namespaces of Scripts/lan (uid {os.geteuid()}); "
                              f"rerun as root: sudo Scripts/bench --only discovery")
        return
    missing = [tool for tool in ("avahi-browse", "avahi-publish", "avahi-daemon", "dbus-daemon", "bash")
               if shutil.which(tool) is None]
    if missing:
        discovery_skip(table, f"missing {', '.join(missing)}: apt-get install -y avahi-daemon avahi-utils dbus "
                              f"(Scripts/bootstrap --test installs them without starting avahi here)")
        return
    base = temp_dir("discovery")
    cannot = lan_up(3)
    if cannot:
        discovery_skip(table, cannot)
        return
    addr = {h: BED.address(h) for h in ("h1", "h2")}
    browse = anchor = None
    probes: list[BenchNode] = []
    try:
        # The browser on h2 runs for the whole part; it also sees each Huddle node's service.
        browse = LineWatcher([*on_host("h2"), "stdbuf", "-oL", "avahi-browse", "-r", "-p", "_huddle._tcp"])
        anchor = BenchNode(binary, "anchor", base / "anchor", room="superbowl", mdns=True,
                           launcher=on_host("h2", stamp_stderr=True), host_address=addr["h2"])
        wait_until(lambda: first_logged(anchor.stderr_path, "[HuddleNode] advertising"), 15,
                   "the node on h2 to finish registering its service")
        time.sleep(1.0)

        base_resolved: list[float] = []
        base_established: list[float] = []
        # Huddle trials: seconds from launching the new node to each moment, per trial.
        moments = ("listed", "joined", "own_mdns", "avahi_saw_node", "ready", "registering", "registered",
                   "lists_anchor")
        huddle: dict[str, list[float]] = {key: [] for key in moments}
        resolve_lag: list[float] = []  # h2's node finding it - h2's avahi-browse resolving it
        trouble: list[str] = []
        for i in range(1, trials + 1):
            # Baseline: avahi-publish on h1 until h2's running avahi-browse resolves it.
            name = f"bench-base-{i}-{os.getpid()}"
            t0 = time.time_ns()
            pub = LineWatcher([*on_host("h1"), "stdbuf", "-oL", "-eL", "avahi-publish", "-s", name,
                               "_huddle._tcp", str(7400 + i), "txtvers=1", f"nick={name}", "rooms=superbowl"])
            try:
                seen = browse.wait(browse_line("=", name), t0, 10)
                if seen is None:
                    trouble.append(f"baseline trial {i}: h2 did not resolve {name} within 10 s")
                else:
                    base_resolved.append((seen - t0) / 1e9)
                    est = pub.first(lambda line: "Established under name" in line)
                    if est is not None:
                        base_established.append((est - t0) / 1e9)
            finally:
                t_stop = time.time_ns()
                pub.stop()
            browse.wait(browse_line("-", name), t_stop, 1.5)

            # Huddle: a fresh node on h1 until the node on h2 lists it as an alive peer.
            nick = f"probe-{i}"
            t0 = time.time_ns()
            probe = BenchNode(binary, nick, base / nick, room="superbowl", mdns=True,
                              launcher=on_host("h1", stamp_stderr=True), host_address=addr["h1"])
            probes.append(probe)
            short = probe.id[:12]
            instance = f"{nick} ({short})"

            def complete() -> bool:
                return (first_output(anchor, lambda o: o["type"] == "join" and o.get("nick") == nick, t0) is not None
                        and first_logged(anchor.stderr_path, "[HuddleNode] peer found", f"huddle.peer={short}")
                        is not None
                        and browse.first(browse_line("=", instance), t0) is not None)

            try:
                wait_until(complete, 10, "", interval=0.05)
            except TimeoutError:
                pass

            def rx(obj: dict | None) -> int | None:
                return obj["_rx_ns"] if obj else None

            seen_at = {
                "listed": rx(first_output(anchor, lambda o: o["type"] == "peer" and o.get("nick") == nick
                                          and o.get("state") == "alive", t0)),
                "joined": rx(first_output(anchor, lambda o: o["type"] == "join" and o.get("nick") == nick, t0)),
                "own_mdns": first_logged(anchor.stderr_path, "[HuddleNode] peer found", f"huddle.peer={short}"),
                "avahi_saw_node": browse.first(browse_line("=", instance), t0),
                "ready": rx(first_output(probe, lambda o: o["type"] == "ready")),
                "registering": first_logged(probe.stderr_path, "[HuddleNode] registering"),
                "registered": first_logged(probe.stderr_path, "[HuddleNode] advertising"),
                "lists_anchor": rx(first_output(probe, lambda o: o["type"] == "peer" and o.get("nick") == "anchor"
                                                and o.get("state") == "alive")),
            }
            for key, value in seen_at.items():
                if value is None:
                    trouble.append(f"Huddle trial {i}: no {key} within 10 s")
                else:
                    huddle[key].append((value - t0) / 1e9)
            if seen_at["own_mdns"] is not None and seen_at["avahi_saw_node"] is not None:
                resolve_lag.append((seen_at["own_mdns"] - seen_at["avahi_saw_node"]) / 1e9)
            t_stop = time.time_ns()
            stop_node(probe)
            browse.wait(browse_line("-", instance), t_stop, 1.5)
            time.sleep(0.5)
            log(f"trial {i}: avahi {base_resolved[-1] if base_resolved else float('nan'):.3f} s, "
                f"huddle listed {huddle['listed'][-1] if huddle['listed'] else float('nan'):.3f} s")

        listed = huddle["listed"]
        if not base_resolved or not listed:
            raise RuntimeError("; ".join(trouble) or "no trial completed")
        b = statistics.median(base_resolved)
        h = statistics.median(listed)

        def med(values: list[float], scale: float = 1.0, unit: str = "s", digits: int = 3) -> str:
            return f"{statistics.median(values) * scale:.{digits}f} {unit}" if values else "n/a"

        table.add("discovery baseline: avahi-publish on h1 -> avahi-browse on h2 resolved",
                  secs3(base_resolved), f"median / min / max, {len(base_resolved)} trials")
        table.add("discovery: huddle run on h1 -> listed alive by the node on h2",
                  secs3(listed), f"median / min / max, {len(listed)} trials")
        table.add("  ratio of medians (Huddle / avahi)", f"{h / b:.2f}x",
                  "target within 1.2x of avahi-browse", h / b <= 1.2 and len(listed) == trials)
        table.add("  same -> h2 shows its join (discovery + probe + pull)", secs3(huddle["joined"]), "info")
        if huddle["own_mdns"]:
            table.add("  same -> h2's own mDNS browse finds it (one way)", secs3(huddle["own_mdns"]),
                      f"info, {statistics.median(huddle['own_mdns']) / b:.2f}x avahi")
        table.note("discovery: each trial is timed from launching the program on h1 (through Scripts/lan exec) to "
                   "this script reading the line on h2; a long-running `avahi-browse -r -p _huddle._tcp` on h2 "
                   "and a node `anchor` on h2 run throughout, baseline and Huddle trials alternate. The node on h2 "
                   "lists the new one as soon as the new one, having found h2's service in its own avahi's cache, "
                   "probes it; h2's own browse only finds it once its name probing is done (the one-way row).")
        table.note("discovery breakdown, medians from launch: new node ready " + med(huddle["ready"])
                   + ", calls DNSServiceRegister " + med(huddle["registering"])
                   + ", lists the node on h2 " + med(huddle["lists_anchor"])
                   + ", its service established (name probing done) " + med(huddle["registered"])
                   + ", h2's avahi-browse resolves it " + med(huddle["avahi_saw_node"])
                   + ", h2's node finds it " + med(resolve_lag, 1000, "ms", 0) + " after that"
                   + "; baseline avahi-publish established " + med(base_established))
        if trouble:
            table.note("discovery trouble: " + "; ".join(trouble))
    finally:
        for node in [*probes, anchor]:
            if node is not None:
                stop_node(node)
        if browse is not None:
            browse.stop()
        lan_down()
