"""Figure 20: pictures (issue 44), on loopback: a 1 MB photo sent to five peers (from the sender's
own line to every peer holding its whole blob, each chunk checked), one picture of the 16 MiB cap
to one peer (its throughput), the nodes' private memory while five pictures go to five peers,
and the bytes on a peer's disk for each byte of picture (the sealed blob, its chunk list, and the
picture's own file once shown)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from ..pictures import big_photo
from .harness import BenchNode, Table, log, memory_kb, pct, start_mesh, temp_dir, wait_until

TARGET_FIVE_PEERS_MS = 300
TARGET_THROUGHPUT_MB_S = 50


def sent_picture(node: BenchNode, caption: str) -> dict:
    """The sender's own line of its picture (its blob is kept by then)."""
    return node.wait_for(lambda o: o.get("type") == "message" and o.get("picture") and o["text"] == caption,
                         timeout=60, what=f"{node.name}'s own picture {caption!r}")


def held_at(nodes: list[BenchNode], root: str, timeout: float = 60) -> list[float]:
    """time.time() at which each node held the whole blob (its file appeared), polled every ms."""
    found: dict[int, float] = {}
    deadline = time.monotonic() + timeout
    while len(found) < len(nodes):
        for i, node in enumerate(nodes):
            if i not in found and (node.data_dir / "pictures" / "blobs" / root).exists():
                found[i] = time.time()
        if time.monotonic() > deadline:
            raise RuntimeError(f"{len(nodes) - len(found)} nodes did not get picture {root[:12]}")
        time.sleep(0.001)
    return [found[i] for i in range(len(nodes))]


def disk_bytes(node: BenchNode, root: str) -> int:
    directory = node.data_dir / "pictures"
    return sum(p.stat().st_size for p in directory.rglob(f"{root}*") if p.is_file())


def bench_pictures(binary: str, trials: int, table: Table) -> None:
    base = temp_dir("pictures")
    nodes = start_mesh(binary, ["alice", "p1", "p2", "p3", "p4", "p5"], base)
    alice, peers = nodes[0], nodes[1:]
    photos = base / "photos"
    photos.mkdir()

    # A 1 MB photo to five peers.
    spans = []
    for trial in range(trials):
        path = photos / f"one-{trial}.jpg"
        path.write_bytes(big_photo(1_000_000, seed=trial))
        caption = f"one megabyte {trial}"
        alice.say(f"/photo {path} {caption}")
        own = sent_picture(alice, caption)
        start = own["_rx_ns"] / 1e9
        done = held_at(peers, own["picture"]["root"])
        spans.append((max(done) - start) * 1000)
    p50, p99 = pct(spans, 50), pct(spans, 99)
    table.add(f"a 1 MB photo -> all 5 peers hold it (sender's own line to the last peer's whole blob; {trials} photos)",
              f"p50 {p50:.0f} ms, p99 {p99:.0f} ms", f"<= {TARGET_FIVE_PEERS_MS} ms", p50 <= TARGET_FIVE_PEERS_MS)

    # Disk on a peer for each byte of picture, once shown.
    last = own["picture"]
    wait_until(lambda: Path(peers[0].data_dir / "pictures" / f"{last['root']}.jpg").exists(), 15, "the shown file")
    ratio = disk_bytes(peers[0], last["root"]) / last["bytes"]
    table.add("bytes on a peer's disk per byte of picture (sealed blob + chunk list + its own file once shown)",
              f"{ratio:.3f}", "", None)

    # One picture of the cap (16 MiB) to one peer: throughput.
    path = photos / "large.jpg"
    data = big_photo(15_500_000, seed=99)
    path.write_bytes(data)
    rates = []
    for trial in range(2):
        caption = f"large {trial}"
        if trial:  # the same bytes again would be the same blob: one byte of a comment changes it
            path.write_bytes(data[:2] + b"\xff\xfe\x00\x04x" + bytes([trial]) + data[2:])
        alice.say(f"/photo {path} {caption}")
        own = sent_picture(alice, caption)
        done = held_at(peers[:1], own["picture"]["root"])
        rates.append(own["picture"]["bytes"] / 1e6 / (done[0] - own["_rx_ns"] / 1e9))
    table.add(f"one picture of {len(data) / 1e6:.1f} MB -> one peer holds it (throughput, loopback)",
              f"{max(rates):.0f} MB/s (runs: {', '.join(f'{r:.0f}' for r in rates)})", f">= {TARGET_THROUGHPUT_MB_S} MB/s",
              max(rates) >= TARGET_THROUGHPUT_MB_S)

    # Memory while five pictures of 3 MB go to five peers.
    before = {node.name: memory_kb(node.process.pid)["RssAnon"] for node in (alice, peers[0])}
    peak = dict(before)
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            for node in (alice, peers[0]):
                peak[node.name] = max(peak[node.name], memory_kb(node.process.pid)["RssAnon"])
            time.sleep(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    roots = []
    for n in range(5):
        path = photos / f"five-{n}.jpg"
        path.write_bytes(big_photo(3_000_000, seed=200 + n))
        alice.say(f"/photo {path} five {n}")
    for n in range(5):
        roots.append(sent_picture(alice, f"five {n}")["picture"]["root"])
    for root in roots:
        held_at(peers, root)
    stop.set()
    sampler.join()
    table.add("private memory (RssAnon) while 5 pictures of 3 MB go to 5 peers: sender, a peer (before -> peak)",
              f"alice {before['alice'] / 1024:.1f} -> {peak['alice'] / 1024:.1f} MB, "
              f"p1 {before['p1'] / 1024:.1f} -> {peak['p1'] / 1024:.1f} MB", "", None)
    log("pictures: done")
