"""Figures 1 and 4: delivery latency, send -> shown among 5 nodes on loopback with no hold-back
(p50/p99/max), and each node's RSS once idle. Keeps every message's slowest delivery for the
Serf comparison (serf.py). Then the machine's floor for the same way with none of Huddle in it
(floor.py)."""

from __future__ import annotations

import time

from .floor import bench_floor
from .harness import Table, log, memory_note, pct, start_mesh, stop_node, temp_dir, wait_until


def bench_latency(binary: str, count: int, spacing: float, table: Table, huddle_all: dict) -> None:
    base = temp_dir("latency")
    names = ["n1", "n2", "n3", "n4", "n5"]
    nodes = start_mesh(binary, names, base)
    sender, receivers = nodes[0], nodes[1:]
    try:
        log("5 nodes up and meshed; idling 5 s for RSS")
        time.sleep(5)
        rss = [n.rss_kb() / 1024 for n in nodes]
        table.add("idle RSS per node (5 nodes, after 5 s idle)",
                  f"{max(rss):.1f} MB", "target <= 30 MB", max(rss) <= 30)
        table.note(memory_note("idle nodes n1..n5", [n.process.pid for n in nodes]))

        # Warm-up: a few messages, not counted.
        for i in range(5):
            sender.say(f"warmup {i}")
            time.sleep(spacing)
        for r in receivers:
            r.message("warmup 4", timeout=15)

        log(f"n1 sends {count} messages, {spacing * 1000:.0f} ms apart")
        written_ns: dict[str, int] = {}
        for i in range(count):
            text = f"lat {i}"
            written_ns[text] = time.time_ns()
            sender.say(text)
            time.sleep(spacing)
        last = f"lat {count - 1}"
        for r in receivers:
            r.message(last, timeout=30)

        def complete():
            return all(sum(1 for o in r.messages() if o["text"].startswith("lat ")) >= count for r in receivers)

        try:
            wait_until(complete, 15, "every receiver to show every message")
        except TimeoutError:
            pass

        sent = {o["text"]: o for o in sender.messages() if o["text"] in written_ns}
        lat: list[int] = []
        held: list[int] = []
        pipe_us: list[float] = []
        node_us: list[int] = []
        per_message_max: dict[str, int] = {}
        missing = 0
        for r in receivers:
            shown = {o["text"]: o for o in r.messages() if o["text"] in written_ns}
            for text, s in sent.items():
                if text not in shown:
                    missing += 1
                    continue
                o = shown[text]
                d = o["shown_at"] - s["sent_at"]
                lat.append(d)
                if "shown_at_us" in o:  # (a node before issue 49 has none)
                    node_us.append(o["shown_at_us"] - written_ns[text] / 1000)
                held.append(o["held_ms"])
                pipe_us.append((o["_rx_ns"] - written_ns[text]) / 1000)
                per_message_max[text] = max(per_message_max.get(text, 0), d)
        if not lat:
            raise RuntimeError("no message was shown on any receiver")
        table.add("delivery latency p50 (5 nodes, no hold-back)", f"{pct(lat, 50):.0f} ms")
        table.add("delivery latency p99 (5 nodes, no hold-back)", f"{pct(lat, 99):.0f} ms",
                  "target <= 5 ms", pct(lat, 99) <= 5 and missing == 0)
        table.add("delivery latency max (5 nodes, no hold-back)", f"{max(lat):.0f} ms")
        if node_us:
            table.add("  same, µs: stdin write -> the reader printed it (its shown_at_us)",
                      f"{pct(node_us, 50) / 1000:.2f} / {pct(node_us, 99) / 1000:.2f} / {max(node_us) / 1000:.2f} ms",
                      "target p50 < 0.5, p99 <= 1 ms (issue 49)", pct(node_us, 99) <= 1000 and pct(node_us, 50) < 500)
        table.add("  same, stdin write -> stdout read (µs clock)",
                  f"{pct(pipe_us, 50) / 1000:.2f} / {pct(pipe_us, 99) / 1000:.2f} / {max(pipe_us) / 1000:.2f} ms",
                  "p50 / p99 / max, info")
        table.note(f"latency: {len(sent)} messages x {len(receivers)} receivers = {len(lat)} samples, "
                   f"{missing} missing, held_ms max {max(held)}; sent_at/shown_at are whole ms "
                   f"(truncated), so each sample is +-1 ms and '0 ms' means under 1 ms. "
                   f"The µs line includes stdin/stdout pipes and this script's reader threads.")
        huddle_all["all"] = list(per_message_max.values())

        time.sleep(3)
        rss_after = [n.rss_kb() / 1024 for n in nodes]
        table.add("RSS per node after the run (info)", f"{max(rss_after):.1f} MB", "max of 5")
    finally:
        for n in nodes:
            stop_node(n)
    bench_floor(count, spacing, table)
