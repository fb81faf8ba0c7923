"""Figure 5: the Serf comparison, a Serf user event reaching all 4 other agents beside a Huddle
message shown on all 4 other nodes (from latency.py), and a Serf agent's idle RSS."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import time

from ..processes import stop_process
from .harness import LIVE_PROCS, Table, log, memory_note, rss_kb, temp_dir, wait_until


def free_port() -> int:
    """A port free for both TCP and UDP on 127.0.0.1 (Serf binds both)."""
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp:
            tcp.bind(("127.0.0.1", 0))
            port = tcp.getsockname()[1]
            try:
                with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
                    udp.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port on 127.0.0.1")


def serf_available(table: Table) -> str | None:
    found = shutil.which("serf")
    if found:
        return found
    if os.geteuid() == 0:
        log("serf missing: apt-get install -y serf")
        done = subprocess.run(["apt-get", "install", "-y", "serf"], capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            done = subprocess.run("apt-get update && apt-get install -y serf", shell=True,
                                  capture_output=True, text=True, timeout=900)
        found = shutil.which("serf")
        if found:
            return found
        table.note("Serf comparison SKIPPED: `apt-get install -y serf` failed: " + done.stderr[-300:])
        return None
    table.note("Serf comparison SKIPPED: serf is not installed and this is not root; "
               "run `sudo apt-get install -y serf` and rerun")
    return None


def bench_serf(count: int, spacing: float, table: Table, huddle_all: dict) -> None:
    serf = serf_available(table)
    if serf is None:
        table.add("Serf comparison", "skipped", "see note")
        return
    base = temp_dir("serf")
    handler = base / "handler.sh"
    handler.write_text('#!/bin/sh\np=$(cat)\necho "$p $(date +%s%N)" >> "$1"\n')
    handler.chmod(0o755)
    agents = []
    try:
        for k in range(1, 6):
            bind, rpc = free_port(), free_port()
            times = base / f"n{k}.times"
            logf = open(base / f"n{k}.log", "w")
            proc = subprocess.Popen(
                [serf, "agent", f"-node=n{k}", f"-bind=127.0.0.1:{bind}", f"-rpc-addr=127.0.0.1:{rpc}",
                 "-profile=lan", "-log-level=info", f"-event-handler=user:bench={handler} {times}"],
                stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT)
            LIVE_PROCS.append(proc)
            agents.append({"name": f"n{k}", "bind": bind, "rpc": f"127.0.0.1:{rpc}", "proc": proc,
                           "times": times, "log": logf})

        def rpc_up(agent):
            try:
                return subprocess.run([serf, "members", f"-rpc-addr={agent['rpc']}"], capture_output=True,
                                      timeout=5).returncode == 0
            except subprocess.TimeoutExpired:
                return False

        for agent in agents:
            if agent["proc"].poll() is not None:
                raise RuntimeError(f"serf agent {agent['name']} exited: {(base / (agent['name'] + '.log')).read_text()[-500:]}")
            wait_until(lambda: rpc_up(agent), 20, f"serf agent {agent['name']} RPC", interval=0.2)
        joined = subprocess.run([serf, "join", f"-rpc-addr={agents[0]['rpc']}"]
                                + [f"127.0.0.1:{a['bind']}" for a in agents[1:]],
                                capture_output=True, text=True, timeout=20)
        if joined.returncode != 0:
            raise RuntimeError(f"serf join failed: {joined.stdout} {joined.stderr}")

        def all_alive():
            for agent in agents:
                out = subprocess.run([serf, "members", f"-rpc-addr={agent['rpc']}", "-format=json",
                                      "-status=alive"], capture_output=True, text=True, timeout=5)
                if out.returncode != 0 or len(json.loads(out.stdout)["members"]) < len(agents):
                    return False
            return True

        wait_until(all_alive, 30, "5 serf agents to see each other alive", interval=0.3)
        log("5 serf agents joined; idling 5 s for RSS")
        time.sleep(5)
        rss = [rss_kb(a["proc"].pid) / 1024 for a in agents]
        table.add("Serf idle agent RSS (5 agents, for comparison)", f"{max(rss):.1f} MB", "info (max of 5)")
        table.note(memory_note("idle Serf agents n1..n5", [a["proc"].pid for a in agents]))

        log(f"firing {count} serf user events from n1, {spacing * 1000:.0f} ms apart")
        fired: dict[str, int] = {}
        for i in range(count):
            payload = f"e{i}"
            fired[payload] = time.time_ns()
            subprocess.run([serf, "event", f"-rpc-addr={agents[0]['rpc']}", "-coalesce=false", "bench", payload],
                           capture_output=True, timeout=10, check=True)
            time.sleep(spacing)

        def handled(agent) -> dict[str, int]:
            got: dict[str, int] = {}
            if agent["times"].exists():
                for line in agent["times"].read_text().splitlines():
                    parts = line.split()
                    if len(parts) == 2 and parts[0] in fired:
                        got.setdefault(parts[0], int(parts[1]))
            return got

        try:
            wait_until(lambda: all(len(handled(a)) >= count for a in agents), 15,
                       "every serf agent to run the handler for every event", interval=0.2)
        except TimeoutError:
            pass
        per_agent = [handled(a) for a in agents]
        all_ms: list[float] = []
        local_ms: list[float] = []
        missing = 0
        lost: list[str] = []
        for payload, t0 in fired.items():
            if payload in per_agent[0]:
                local_ms.append((per_agent[0][payload] - t0) / 1e6)
            others = [h.get(payload) for h in per_agent[1:]]
            if any(t is None for t in others):
                missing += 1
                lost.append(f"{payload} on " + ",".join(a["name"] for a, t in zip(agents[1:], others) if t is None))
                continue
            all_ms.append((max(others) - t0) / 1e6)
        if not all_ms:
            raise RuntimeError("no serf event reached all agents")
        h = huddle_all.get("all")
        serf_text = f"{statistics.median(all_ms):.0f} / {max(all_ms):.0f} ms"
        huddle_text = f"{statistics.median(h):.0f} / {max(h):.0f} ms" if h else "n/a"
        table.add("on ALL other 4 members: Serf user event, median / max", serf_text, f"{len(all_ms)} events")
        table.add("on ALL other 4 members: Huddle message, median / max", huddle_text,
                  f"{len(h)} messages" if h else "latency run failed")
        table.note(f"Serf: time from starting `serf event` on n1 to the last of n2..n5 running its handler "
                   f"(sh + date, ns); {missing} events missed an agent{' (' + '; '.join(lost) + ')' if lost else ''}; n1's own handler ran "
                   f"{statistics.median(local_ms):.0f} ms (median) after firing, which is the CLI + RPC + handler "
                   f"overhead included in the Serf figure. Huddle: max over the 4 receivers of shown_at - sent_at "
                   f"(whole ms).")
    finally:
        for agent in agents:
            stop_process(agent["proc"], signal.SIGTERM)
            if agent["proc"] in LIVE_PROCS:
                LIVE_PROCS.remove(agent["proc"])
            agent["log"].close()
