"""What every figure of Scripts/bench stands on: the processes and temp dirs it starts, all
registered so they are stopped and removed at the end; nodes whose output lines carry the time
they were read; the table of figures; percentiles; and the bench's own simulated LAN."""

from __future__ import annotations

import json
import math
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..lan import Bed
from ..node import Node
from ..processes import stop_process

ROOM = "bench"

# ---------------------------------------------------------------------------------------------
# Processes and temp dirs: everything started is registered here and stopped at the end.

LIVE_NODES: list["BenchNode"] = []
LIVE_PROCS: list[subprocess.Popen] = []
TEMP_DIRS: list[Path] = []
KEEP_TEMP = False


def log(text: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def stop_node(node: "BenchNode") -> None:
    proc = node.process
    if proc.poll() is None:
        try:
            node.say("/quit")
            proc.wait(timeout=5)
        except (BrokenPipeError, ValueError, OSError, subprocess.TimeoutExpired):
            pass
    stop_process(proc)
    try:
        node._stderr.close()
    except Exception:
        pass
    if node in LIVE_NODES:
        LIVE_NODES.remove(node)


def cleanup() -> None:
    for node in list(LIVE_NODES):
        stop_node(node)
    for proc in list(LIVE_PROCS):
        stop_process(proc)
        LIVE_PROCS.remove(proc)
    lan_down()
    for path in list(TEMP_DIRS):
        if KEEP_TEMP:
            log(f"kept {path}")
        else:
            shutil.rmtree(path, ignore_errors=True)
        TEMP_DIRS.remove(path)


def temp_dir(prefix: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix=f"huddle-bench-{prefix}-"))
    TEMP_DIRS.append(path)
    return path


class BenchNode(Node):
    """node.Node that is always registered for cleanup and stamps each stdout line with the
    wall-clock time (ns) this script read it (`_rx_ns`), for a µs-resolution cross-check."""

    def __init__(self, binary: str, name: str, data_dir: Path, **kwargs):
        try:
            super().__init__(binary, name, data_dir, **kwargs)
        except BaseException:
            proc = getattr(self, "process", None)
            if proc is not None:
                stop_process(proc, signal.SIGKILL)
            if hasattr(self, "_stderr"):
                self._stderr.close()
            raise
        LIVE_NODES.append(self)

    def _read(self) -> None:
        for line in self.process.stdout:
            rx = time.time_ns()
            self.raw.append(line)
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                obj = {"type": "unparsed", "line": line}
            obj["_rx_ns"] = rx
            self.outputs.append(obj)
            self.lines.put(obj)

    def messages(self) -> list[dict]:
        return [o for o in list(self.outputs) if o.get("type") == "message"]

    def rss_kb(self) -> int:
        return rss_kb(self.process.pid)


def rss_kb(pid: int) -> int:
    return memory_kb(pid)["VmRSS"]


def memory_kb(pid: int) -> dict[str, int]:
    """VmRSS, RssAnon, RssFile (from /proc/PID/status), Pss and Private (Private_Clean +
    Private_Dirty, smaps_rollup: the pages only this process holds), in kB."""
    found: dict[str, int] = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key = line.split(":")[0]
            if key in ("VmRSS", "RssAnon", "RssFile"):
                found[key] = int(line.split()[1])
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    found["Pss"] = int(line.split()[1])
                elif line.startswith(("Private_Clean:", "Private_Dirty:")):
                    found["Private"] = found.get("Private", 0) + int(line.split()[1])
    except OSError:
        pass
    if "VmRSS" not in found:
        raise RuntimeError(f"no VmRSS for pid {pid}")
    return found


def memory_note(what: str, pids: list[int]) -> str:
    mems = [memory_kb(pid) for pid in pids]

    def col(key: str) -> str:
        return ", ".join(f"{m[key] / 1024:.1f}" if key in m else "?" for m in mems)

    return (f"{what}: VmRSS {col('VmRSS')} MB; of which file-backed (binary + shared libraries) "
            f"{col('RssFile')} MB and anonymous {col('RssAnon')} MB; Pss {col('Pss')} MB")


def wait_until(predicate, timeout: float, what: str, interval: float = 0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


# ---------------------------------------------------------------------------------------------
# Figures

def pct(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


class Table:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str]] = []
        self.notes: list[str] = []
        self.failures: list[str] = []

    def add(self, label: str, value: str, target: str = "", ok: bool | None = None) -> None:
        verdict = "" if ok is None else ("OK" if ok else "MISSED")
        self.rows.append((label, value, target, verdict))
        log(f"{label}: {value} {target} {verdict}".rstrip())

    def note(self, text: str) -> None:
        self.notes.append(text)

    def fail(self, section: str, reason: str) -> None:
        self.failures.append(section)
        self.rows.append((f"{section}", "FAILED", "", "see note"))
        self.notes.append(f"{section} FAILED: {reason}")
        log(f"{section} FAILED: {reason}")

    def print(self) -> None:
        widths = [max(len(r[i]) for r in self.rows) for i in range(4)] if self.rows else [0] * 4
        print()
        for label, value, target, verdict in self.rows:
            print(f"{label:<{widths[0]}}   {value:>{widths[1]}}   {target:<{widths[2]}}   {verdict}".rstrip())
        if self.notes:
            print()
            for text in self.notes:
                print(f"note: {text}")


def ms3(values: list[float]) -> str:
    return f"{pct(values, 50):.0f} / {pct(values, 99):.0f} / {max(values):.0f} ms"


# ---------------------------------------------------------------------------------------------
# Meshes of nodes on loopback

def start_mesh(binary: str, names: list[str], base: Path) -> list[BenchNode]:
    """Nodes in ROOM, all seeded with the first; returns once every node has every other as an
    alive peer and has seen every other join."""
    first = BenchNode(binary, names[0], base / names[0], room=ROOM)
    nodes = [first]
    for name in names[1:]:
        nodes.append(BenchNode(binary, name, base / name, room=ROOM, peers=[first.address]))
    for node in nodes:
        for other in names:
            if other != node.name:
                node.wait_for(lambda o, n=other: o["type"] == "join" and o.get("nick") == n,
                              timeout=30, what=f"{other} joining")

    def all_alive():
        for node in nodes:
            alive = [p for p in node.status()["peers"] if p["state"] == "alive"]
            if len(alive) < len(nodes) - 1:
                return False
        return True

    wait_until(all_alive, 30, "every node to see every other alive", interval=0.3)
    return nodes


# ---------------------------------------------------------------------------------------------
# The simulated LAN of the discovery and lossy-LAN parts

BED = Bed("bench")       # our own bed: namespaces huddle-bench-*, state in /tmp/huddle-lan-bench
LAN_BED: list[str] = []  # non-empty while a bed this script brought up may exist
# Each node's stderr goes through this filter, which prefixes every line with the wall-clock
# time it was written (swift-log's own timestamps are whole seconds).
STAMP = ("import sys, time\n"
         "for line in sys.stdin:\n"
         "    sys.stdout.write('%.6f %s' % (time.time(), line))\n"
         "    sys.stdout.flush()\n")


def lan_up(hosts: int) -> str | None:
    """Brings up our bed of `hosts` hosts. Returns why it cannot when this machine cannot make
    namespaces (Scripts/lan exits 2); raises on any other failure."""
    LAN_BED.append(BED.tag)
    log(f"bringing up a simulated LAN: HUDDLE_LAN_TAG={BED.tag} Scripts/lan up {hosts}")
    up = BED.run("up", str(hosts), check=False)
    if up.returncode == 2:
        LAN_BED.clear()
        fatal = next((line for line in up.stderr.splitlines() if "FATAL" in line), up.stderr.strip()[-300:])
        return f"Scripts/lan cannot make namespaces here: {fatal}"
    if up.returncode != 0:
        if "already up" in up.stderr:
            LAN_BED.clear()  # not ours: leave it alone
        raise RuntimeError(f"Scripts/lan up {hosts} (tag {BED.tag}) exited {up.returncode}: {up.stderr.strip()[-600:]}"
                           + (f" -- if it is a leftover of an earlier bench, remove it with "
                              f"HUDDLE_LAN_TAG={BED.tag} Scripts/lan down" if "already up" in up.stderr else ""))
    return None


def lan_down() -> None:
    """Tears our bed down (no-op if none was brought up). Signals wait until it is done."""
    if not LAN_BED:
        return
    try:
        down = BED.down()
        if down.returncode != 0:
            log(f"Scripts/lan down (tag {BED.tag}) exited {down.returncode}: {down.stderr.strip()[-500:]}")
        else:
            LAN_BED.clear()
    except Exception as error:  # noqa: BLE001 - report and carry on with the rest of the cleanup
        log(f"Scripts/lan down (tag {BED.tag}) failed: {error}; run: HUDDLE_LAN_TAG={BED.tag} Scripts/lan down")


def on_host(host: str, stamp_stderr: bool = False) -> list[str]:
    """Prefix that runs a command on a simulated host. With `stamp_stderr` the command (a
    `huddle run`) also gets `--log-level debug` and its stderr lines are time-stamped. Every link
    execs the next, so the pid is the command's own."""
    if not stamp_stderr:
        return BED.on_host(host)
    return [*BED.on_host(host, HUDDLE_BENCH_PY=sys.executable, HUDDLE_BENCH_STAMP=STAMP),
            "bash", "-c",
            'exec "$0" "$@" --log-level debug 2> >(exec "$HUDDLE_BENCH_PY" -u -c "$HUDDLE_BENCH_STAMP" >&2)']
