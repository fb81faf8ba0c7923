"""Figure 8: delivery on a lossy LAN (Scripts/lan, root only): three hosts that each drop 20 % of
the packets they receive; a stream of messages and lone ones, sent -> shown (p50/p99/max), and
how many were missing or shown twice."""

from __future__ import annotations

import os
import shutil
import time

from .harness import BED, ROOM, BenchNode, Table, lan_down, lan_up, log, ms3, on_host, pct, stop_node, temp_dir


def bench_loss(binary: str, stream_n: int, lone_n: int, table: Table, percent: int = 20) -> None:
    """Three hosts of the simulated LAN, found over mDNS; then every host drops `percent` % of
    the packets it receives (Scripts/lan loss) and alice on h1 writes. Times are the nodes' own
    sent_at / shown_at (one machine, one clock)."""
    if os.geteuid() != 0:
        table.add("delivery on a lossy LAN", "skipped", "needs root (network namespaces): sudo Scripts/bench --only loss")
        return
    if shutil.which("iptables") is None:
        table.add("delivery on a lossy LAN", "skipped", "needs iptables (Scripts/bootstrap --test installs it)")
        return
    base = temp_dir("loss")
    cannot = lan_up(3)
    if cannot:
        table.add("delivery on a lossy LAN", "skipped", cannot)
        return
    nodes: list[BenchNode] = []
    try:
        names = {"h1": "alice", "h2": "bob", "h3": "carol"}
        for host, name in names.items():
            nodes.append(BenchNode(binary, name, base / name, room=ROOM, mdns=True, launcher=on_host(host),
                                   host_address=BED.address(host)))
        alice, bob, carol = nodes
        for node in nodes:
            for other in names.values():
                if other != node.name:
                    node.wait_for(lambda o, n=other: o["type"] == "join" and o["nick"] == n, timeout=30,
                                  what=f"{other}'s join over mDNS")
        for host in names:
            loss = BED.run("loss", host, str(percent), check=False)
            if loss.returncode != 0:
                raise RuntimeError(f"Scripts/lan loss {host} {percent}: {loss.stderr.strip()}")
        lossy_from = [len(node.outputs) for node in nodes]
        lossy_since = time.monotonic()

        def run(label: str, count: int, spacing: float) -> tuple[list[int], int, int]:
            texts = [f"{label} {i}" for i in range(count)]
            log(f"{count} messages from alice, {spacing * 1000:.0f} ms apart, {percent} % loss on every host")
            for text in texts:
                alice.say(text)
                time.sleep(spacing)
            delays: list[int] = []
            missing = twice = 0
            for reader in (bob, carol):
                try:
                    reader.message(texts[-1], timeout=30)
                except AssertionError:
                    pass
                time.sleep(1.5)
                shown = [o for o in reader.messages() if o["text"].startswith(label + " ")]
                seen = [o["text"] for o in shown]
                twice += len(seen) - len(set(seen))
                missing += len(set(texts) - set(seen))
                delays += [o["shown_at"] - o["sent_at"] for o in shown]
            return delays, missing, twice

        stream, missing, twice = run("stream", stream_n, 0.1)
        table.add(f"lossy LAN, {percent} % loss: {stream_n} messages 100 ms apart, p50", f"{pct(stream, 50)} ms",
                  "target <= 50 ms", pct(stream, 50) <= 50)
        table.add(f"lossy LAN, {percent} % loss: {stream_n} messages 100 ms apart, p99 / max",
                  f"{pct(stream, 99)} / {max(stream)} ms", "target p99 <= 1,500 ms, none lost or twice",
                  pct(stream, 99) <= 1500 and missing == 0 and twice == 0)
        lone, lone_missing, lone_twice = run("lone", lone_n, 1.0)
        table.add(f"lossy LAN, {percent} % loss: {lone_n} lone messages 1 s apart, p50 / p99 / max",
                  ms3(lone), "info")
        # Every node stays up: each "not answering" or "gone" a node printed is a false alarm.
        alarms = sum(1 for node, start in zip(nodes, lossy_from) for o in list(node.outputs)[start:]
                     if o.get("type") == "peer" and o.get("state") in ("suspect", "gone"))
        table.add(f"lossy LAN, {percent} % loss: peers reported not answering or gone (all were up)",
                  f"{alarms} in {time.monotonic() - lossy_since:.0f} s", "info")
        table.note(f"lossy LAN: 3 hosts (Scripts/lan), each dropping {percent} % of incoming packets at random "
                   f"(iptables statistic match) after the nodes met over mDNS; samples = shown_at - sent_at on "
                   f"bob and carol: stream {len(stream)} ({missing} missing, {twice} shown twice), lone "
                   f"{len(lone)} ({lone_missing} missing, {lone_twice} twice). A lone message has no later push "
                   f"to reveal its loss: the sender's tail digests (100 and 400 ms) or anti-entropy (1 s) do.")
    finally:
        for node in nodes:
            stop_node(node)
        lan_down()
