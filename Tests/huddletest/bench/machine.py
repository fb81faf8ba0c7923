"""Figure 15: the node as one pure machine (issue 18), before and after in the same run.

Delivery latency send -> shown among 5 nodes on loopback (node clocks, whole ms), in a quiet
room (one writer) and a busy one (the four others write too), each on a fast disk and on a slow
one: every fsync 50 ms longer (an LD_PRELOAD shim, `slowsync.c`), which is what a node's own
commit waited for before issue 49 (now only one in 256 lines waits for one: the lease of seqs). For the new node also with every commit 50 ms longer
(`HUDDLE_STORE_COMMIT_DELAY_MS`). Then the ingest rate of each. `before` is a huddle binary built
from the commit before the redesign (`HUDDLE_BIN_BEFORE`); without it only the new node runs.
Last, where the time of the quiet room goes, in µs: the nodes trace each message's steps
(`HUDDLE_TRACE_DELIVERY`, Sources/HuddleNode/Node/DeliveryTrace.swift), with a real fsync and
with fsync made free (a preloaded shim, `nosync.c`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from .harness import TEMP_DIRS, Table, log, pct, start_mesh, stop_node, temp_dir, wait_until
from .ingest import bench_ingest

SHIM_SOURCE = Path(__file__).with_name("slowsync.c")


def build_shim(source: Path = SHIM_SOURCE) -> str:
    out = temp_dir(source.stem) / f"{source.stem}.so"
    compiler = shutil.which("cc") or shutil.which("clang") or "/opt/swift/usr/bin/clang"
    subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", str(out), str(source), "-ldl"], check=True)
    return str(out)


@contextmanager
def environment(extra: dict[str, str]):
    """Nodes started inside inherit `extra`; the bench's own process is not slowed (the shim is
    loaded only by the nodes, which exec with the variable set)."""
    saved = {key: os.environ.get(key) for key in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def latencies(binary: str, count: int, busy: bool, env: dict[str, str]) -> tuple[list[int], int]:
    """n1 writes `count` messages 20 ms apart; with `busy`, n2..n5 each write one every 100 ms
    meanwhile. Returns n1's messages' send -> shown on n2..n5, and how many never showed."""
    base = temp_dir("machine")
    with environment(env):
        nodes = start_mesh(binary, ["n1", "n2", "n3", "n4", "n5"], base)
    sender, others = nodes[0], nodes[1:]
    stop = threading.Event()

    def chatter(node):
        i = 0
        while not stop.is_set():
            node.say(f"{node.name} chat {i}")
            i += 1
            time.sleep(0.1)

    threads = [threading.Thread(target=chatter, args=(n,), daemon=True) for n in others] if busy else []
    try:
        for t in threads:
            t.start()
        for i in range(5):
            sender.say(f"warmup {i}")
            time.sleep(0.02)
        for i in range(count):
            sender.say(f"lat {i}")
            time.sleep(0.02)
        stop.set()
        for t in threads:
            t.join(timeout=5)

        def complete():
            return all(sum(1 for o in r.messages() if o["text"].startswith("lat ")) >= count for r in others)

        try:
            wait_until(complete, 20, "every receiver to show every message")
        except TimeoutError:
            pass
        sent = {o["text"]: o for o in sender.messages() if o["text"].startswith("lat ")}
        samples: list[int] = []
        missing = 0
        for r in others:
            shown = {o["text"]: o for o in r.messages() if o["text"].startswith("lat ")}
            for text, s in sent.items():
                if text in shown:
                    samples.append(shown[text]["shown_at"] - s["sent_at"])
                else:
                    missing += 1
        return samples, missing
    finally:
        stop.set()
        for n in nodes:
            stop_node(n)


def bench_machine(binary: str, before: str | None, count: int, ingest_n: int, table: Table) -> None:
    shim = build_shim()
    slow_fsync = {"LD_PRELOAD": shim, "SLOWSYNC_MS": "50"}
    variants = ([("before", before)] if before else []) + [("after", binary)]
    disks = [("fast disk", {}), ("fsync +50 ms", slow_fsync)]
    for label, path in variants:
        runs = disks + ([("every commit +50 ms", {"HUDDLE_STORE_COMMIT_DELAY_MS": "50"})] if label == "after" else [])
        for disk, env in runs:
            for busy in (False, True):
                room = "busy room" if busy else "quiet room"
                log(f"{label}: {room}, {disk}")
                samples, missing = latencies(path, count, busy, env)
                if not samples:
                    table.add(f"{label}: {room}, {disk}", "nothing shown", "", False)
                    continue
                target, ok = "", None
                if label == "after" and disk == "fast disk":
                    target, ok = "target p99 <= 1 ms", pct(samples, 99) <= 1 and missing == 0
                table.add(f"{label}: {room}, {disk}: p50 / p99 / max",
                          f"{pct(samples, 50):.0f} / {pct(samples, 99):.0f} / {max(samples):.0f} ms",
                          target or f"{len(samples)} samples, {missing} missing", ok)
    nosync = {"LD_PRELOAD": build_shim(SHIM_SOURCE.with_name("nosync.c"))}
    for label, env in (("where the time goes", {}), ("where the time goes, fsync free", nosync)):
        log(label)
        breakdown(binary, count, label, env, table)
    for label, path in variants:
        log(f"{label}: ingest")
        bench_ingest(path, ingest_n, 20, table, label=f"{label}: ")
    table.note("machine: send -> shown on node clocks (whole ms: '0 ms' is under 1 ms); a busy room has "
               "n2..n5 writing every 100 ms while n1 writes every 20 ms; 'fsync +50 ms' preloads "
               "Tests/huddletest/bench/slowsync.c into every node.")


# The steps DeliveryTrace marks, and the stretches between them the table shows.
WRITER_STAGES = ("made", "stored", "sent")
READER_STAGES = ("received", "decoded", "taken")
STRETCHES = [
    ("made", "stored", "writer: own event's commit (writer thread; an fsync once per lease)"),
    ("stored", "sent", "writer: back on the actor, push handed to the socket"),
    ("sent", "received", "loopback: socket to socket, NIO's read, the reader's task woken"),
    ("received", "decoded", "reader: past the rate limit, before the actor"),
    ("decoded", "taken", "reader: onto the actor, decode, signature check, ingest, hold-back"),
    ("made", "taken", "made on the writer -> taken by the reader"),
]


def traces(directory: Path) -> dict[str, dict[str, dict[str, int]]]:
    """node name -> event id -> stage -> µs, from the `huddle-trace` lines of every stderr file
    in `directory` (the first mark of a stage counts: a push resent later is not the message's)."""
    found: dict[str, dict[str, dict[str, int]]] = {}
    for path in directory.glob("*.stderr"):
        node = path.name.rsplit("-", 1)[0]
        marks = found.setdefault(node, {})
        for line in path.read_text(errors="replace").splitlines():
            parts = line.split()
            if len(parts) == 4 and parts[0] == "huddle-trace":
                marks.setdefault(parts[2], {}).setdefault(parts[1], int(parts[3]))
    return found


def breakdown(binary: str, count: int, label: str, env: dict[str, str], table: Table) -> None:
    """The quiet room once more with the trace on: n1's messages, each stretch's p50 / p99 in µs
    over the 4 readers."""
    latencies(binary, count, False, {**env, "HUDDLE_TRACE_DELIVERY": "1"})
    directory = next(d for d in reversed(TEMP_DIRS) if d.name.startswith("huddle-bench-machine-"))
    found = traces(directory)
    writer = found.get("n1", {})
    stretches: dict[str, list[int]] = {name: [] for _, _, name in STRETCHES}
    for reader in ("n2", "n3", "n4", "n5"):
        for event, marks in found.get(reader, {}).items():
            steps = {**{k: v for k, v in writer.get(event, {}).items() if k in WRITER_STAGES},
                     **{k: v for k, v in marks.items() if k in READER_STAGES}}
            for start, end, name in STRETCHES:
                if start in steps and end in steps:
                    stretches[name].append(steps[end] - steps[start])
    for _, _, name in STRETCHES:
        values = stretches[name]
        if values:
            table.add(f"{label}: {name}, p50 / p99", f"{pct(values, 50):,} / {pct(values, 99):,} µs",
                      f"{len(values)} samples")
