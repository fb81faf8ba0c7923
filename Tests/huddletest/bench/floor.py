"""The floor beside figure 1: what delivery takes on this machine with none of Huddle in it.

Five processes as the latency figure has five nodes: a writer that reads a line from its stdin,
signs it (Ed25519) and sends one datagram to each of four readers; each reader checks the
signature and writes the line to its stdout (`floor.c`, one thread a process, no queue, no store).
Driven as figure 1 drives the nodes: a line to the writer's stdin every `spacing` seconds, each
reader's stdout drained by a thread of this script, and the time from the stdin write to the
reader's wall clock just before it printed the line (what a node's `shown_at_us` says). Then the
same with the hand-overs between threads that a node makes and no more (`FLOOR_HANDOVERS=1`):
the writer's input thread to the thread that signs and sends, each reader's socket thread to the
thread that checks and that one to the thread that prints. Needs a C compiler and OpenSSL's
headers (libssl-dev); without them the figure says so and is skipped.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

from .harness import LIVE_PROCS, Table, log, pct, temp_dir

SOURCE = Path(__file__).with_name("floor.c")


def build_floor() -> str | None:
    compiler = shutil.which("cc") or shutil.which("clang") or "/opt/swift/usr/bin/clang"
    out = temp_dir("floor") / "floor"
    built = subprocess.run([compiler, "-O2", "-o", str(out), str(SOURCE), "-lcrypto", "-lpthread"],
                           capture_output=True, text=True)
    if built.returncode != 0:
        log(f"floor: could not build floor.c (needs a C compiler and libssl-dev): {built.stderr.strip()[:200]}")
        return None
    return str(out)


def free_udp_ports(count: int) -> list[int]:
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def floor_latencies(program: str, readers: int, count: int, spacing: float, handovers: bool) -> tuple[list[float], int]:
    """Each line's stdin write -> a reader's print, µs, over every reader; and how many never came."""
    ports = free_udp_ports(readers)
    env = {**os.environ, "FLOOR_HANDOVERS": "1" if handovers else "0"}
    processes = [subprocess.Popen([program, "reader", str(port)], stdout=subprocess.PIPE, env=env) for port in ports]
    LIVE_PROCS.extend(processes)
    printed: list[tuple[str, int]] = []

    def drain(process: subprocess.Popen) -> None:
        for line in process.stdout:
            text, _, at = line.decode().rpartition(" ")
            printed.append((text, int(at)))

    for process in processes:
        threading.Thread(target=drain, args=(process,), daemon=True).start()
    time.sleep(0.3)
    writer = subprocess.Popen([program, "writer", *map(str, ports)], stdin=subprocess.PIPE, env=env)
    LIVE_PROCS.append(writer)
    time.sleep(0.3)
    written_us: dict[str, float] = {}
    for i in range(count + 5):  # the first five warm up and are not counted, as figure 1's
        text = f"floor {i}"
        if i >= 5:
            written_us[text] = time.time_ns() / 1000
        writer.stdin.write(f"{text}\n".encode())
        writer.stdin.flush()
        time.sleep(spacing)
    time.sleep(0.5)
    writer.stdin.close()
    for process in [writer, *processes]:
        process.kill()
        process.wait()
    latencies = [at - written_us[text] for text, at in list(printed) if text in written_us]
    return latencies, count * readers - len(latencies)


def bench_floor(count: int, spacing: float, table: Table) -> None:
    program = build_floor()
    if program is None:
        table.note("floor: skipped (no C compiler or no libssl-dev to build floor.c)")
        return
    for handovers, label in ((False, "the bare pipeline (C, one thread a process: read, sign, 4 x sendto; recv, verify, print)"),
                             (True, "the same with a node's hand-overs between threads (input -> sign, socket -> check -> print)")):
        log(f"the floor: {label}, {count} lines {spacing * 1000:.0f} ms apart")
        latencies, missing = floor_latencies(program, 4, count, spacing, handovers)
        table.add(f"  the machine's floor: {label}" if not handovers else f"  {label}",
                  f"{pct(latencies, 50) / 1000:.2f} / {pct(latencies, 99) / 1000:.2f} / {max(latencies) / 1000:.2f} ms",
                  "p50 / p99 / max, info")
        table.note(f"floor ({'hand-overs' if handovers else 'bare'}): {len(latencies)} samples, {missing} missing; no Huddle in it "
                   "(bench/floor.py says what it is)")
