"""Figure 9, continued: what strangers cost a node (issue 21), beside the no-attack baseline.

- **Bad signatures.** From one stranger's port, ~47 datagrams a second of 340 well-formed joins
  with wrong signatures (under the 400-datagram rate, so only the budget of signature checks
  stands in the way): chat alice -> bob p50/p99 and bob's CPU.
- **Big frames.** 32 TCP connections (4 from each of 8 addresses, every sync slot) each announce
  a 4 MiB − 1 frame and send what the node takes: bob's RSS before, during and after.
- **Fresh keys' joins.** Signed joins from fresh keys until bob's open origin slots are full:
  how long a newcomer (carol) then takes to chat both ways with bob.
- **Made-up peers.** A live peer's probes carrying 320 made-up alive records: carol -> bob chat
  latency meanwhile, and the size of bob's peer table.
- **One machine's keys** (issue 31): 16 keys on 127.0.0.2, each answering at its own port, join
  once the open slots are full: how many reserved slots they take, and a newcomer's time to chat.
- **Throwaway keys' events**: 64 fresh keys send 32 events each without a join: what bob stores
  and his data dir.
- **Connection churn**: 16 threads open a sync connection, send a byte and close, for 10 s:
  bob's heap per connection.
- **Silent keys**: 100 keys probe bob once and fall silent, then carol dies (SIGKILL): how long
  bob takes to say she is gone.
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time

from ..wire import (Chat, Event, Join, Limits, PeerRecord, VersionVector, WireClient, encode_event, encode_events,
                    encode_probe, monotonic_us, now_ms, sign_event)
from .attacks import fresh_key, measure_latency, start_pair
from .harness import ROOM, BenchNode, Table, log, memory_kb, pct, stop_node, temp_dir


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class BadSignatureFlood:
    """~47 datagrams a second from one port, each 340 joins of fresh origins, wrongly signed (372
    until wire version 6 made each event 32 bytes longer): from a socket of its own, or through
    `send(data)` (a client's socket, say, one the node knows)."""

    def __init__(self, target: str, rate: float = 47, events: int = 340, send=None, room: str = ROOM):
        self.host, port = target.rsplit(":", 1)
        self.room = room
        self.port = int(port)
        self.rate = rate
        self.send = send
        self.origins = [fresh_key()[1] for _ in range(events)]
        self.sent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="bad-signatures")

    def _run(self) -> None:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            send = self.send or (lambda data: udp.sendto(data, (self.host, self.port)))
            while not self._stop.is_set():
                self.sent += 1
                n = self.sent
                events = [encode_event(Event(origin, 1, self.room, now_ms() + n, VersionVector(), Join(f"x{n}"),
                                             signature=os.urandom(64))) for origin in self.origins]
                send(encode_events(events))
                self._stop.wait(1 / self.rate)

    def __enter__(self) -> "BadSignatureFlood":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(5)


def big_frames(target: str, sources: int = 8, per_source: int = 4, chunks: int = 64) -> int:
    """Every sync slot opened with a frame header announcing 4 MiB − 1, then 64 KiB chunks of it
    until the node cuts the connection; returns how many connections were cut."""
    host, port = target.rsplit(":", 1)
    sockets = []
    for s in range(sources):
        for _ in range(per_source):
            tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            tcp.settimeout(5)
            try:
                tcp.bind((f"127.0.0.{2 + s}", 0))
                tcp.connect((host, int(port)))
                sockets.append(tcp)
            except OSError:
                tcp.close()
    for tcp in sockets:
        try:
            tcp.sendall(struct.pack(">I", Limits.max_frame_bytes - 1))
            for _ in range(chunks):
                tcp.sendall(bytes(64 * 1024))
        except OSError:
            pass
    cut = 0
    for tcp in sockets:
        try:
            if tcp.recv(1) == b"":
                cut += 1
        except (ConnectionResetError, BrokenPipeError):
            cut += 1
        except OSError:
            pass
        tcp.close()
    return cut


class Churn:
    """Sync connections opened, sent a byte and closed, over and over, from `threads` threads,
    while the `with` block runs; `opened` counts them."""

    def __init__(self, target: str, threads: int = 16):
        host, port = target.rsplit(":", 1)
        self.address = (host, int(port))
        self.opened = 0
        self._stop = threading.Event()
        self._workers = [threading.Thread(target=self._run, daemon=True) for _ in range(threads)]

    def _run(self):
        while not self._stop.is_set():
            try:
                with socket.create_connection(self.address, timeout=1) as conn:
                    conn.send(b"\x00")
                self.opened += 1
            except OSError:
                time.sleep(0.01)

    def __enter__(self) -> "Churn":
        for worker in self._workers:
            worker.start()
        return self

    def __exit__(self, *_):
        self._stop.set()
        for worker in self._workers:
            worker.join()


def throwaway_keys(send, keys: int, events: int, room: str = ROOM) -> None:
    """`keys` fresh keys each send seqs 2..events+1 of `room` (4 KB chats, no join) with
    `send(datagram)`, 14 events a datagram."""
    for _ in range(keys):
        key, origin = fresh_key()
        chats = [encode_event(sign_event(Event(origin, seq, room, now_ms(), VersionVector({origin: seq - 1}),
                                               Chat("t" * 4000)), key)) for seq in range(2, events + 2)]
        for i in range(0, len(chats), 14):
            send(encode_events(chats[i:i + 14]))
            time.sleep(0.01)


def silent_keys(target: str, count: int, source_host: str, room: str = ROOM) -> None:
    """`count` fresh keys in `room` each send `target` one probe from a port of their own on
    `source_host`, then close it: they never answer."""
    host, port = target.rsplit(":", 1)
    for i in range(count):
        key, origin = fresh_key()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            udp.bind((source_host, 0))
            udp.sendto(encode_probe(origin, f"silent{i}", 1, 1 << 32, monotonic_us(), udp.getsockname()[1], [room],
                                    key=key), (host, int(port)))


def newcomer_chats(binary: str, base, name: str, seed: BenchNode) -> tuple[BenchNode, float]:
    """A node `name` started now, seeded with `seed`, and the seconds until it and `seed` have
    each shown a line of the other's."""
    started = time.monotonic()
    node = BenchNode(binary, name, base / name, room=ROOM, peers=[seed.address])
    node.say(f"{name} is here")
    seed.message(f"{name} is here", timeout=30)
    seed.say(f"welcome {name}")
    node.message(f"welcome {name}", timeout=30)
    return node, time.monotonic() - started


def bench_strangers(binary: str, count: int, spacing: float, table: Table) -> None:
    base = temp_dir("strangers")
    alice, bob = start_pair(binary, base)
    nodes = [alice, bob]
    try:
        def row(condition: str, lat: list[int], missing: int, cpu: str = "") -> None:
            table.add(f"strangers: latency alice -> bob p50 / p99, {condition}",
                      f"{pct(lat, 50):.0f} / {pct(lat, 99):.0f} ms" if lat else "none shown",
                      f"{len(lat)} shown, {missing} missing{cpu}")

        started, before = time.monotonic(), cpu_seconds(bob.process.pid)
        lat, missing = measure_latency(alice, bob, "quiet", count, spacing)
        busy = (cpu_seconds(bob.process.pid) - before) / (time.monotonic() - started)
        row("no attack", lat, missing, f"; bob's CPU {busy * 100:.1f} % of a core")

        log("fresh keys' joins fill bob's open origin slots")
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            host, port = bob.address.rsplit(":", 1)
            for i in range(100):
                key, origin = fresh_key()
                join = sign_event(Event(origin, 1, ROOM, now_ms(), VersionVector({}), Join(f"key{i}")), key)
                udp.sendto(encode_events([join]), (host, int(port)))
                time.sleep(0.003)
        time.sleep(1)
        carol, took = newcomer_chats(binary, base, "carol", bob)
        nodes.append(carol)
        room = next(r for r in bob.status()["rooms"] if r["name"] == ROOM)
        table.add("strangers: newcomer's start to chatting both ways, bob's open origin slots full",
                  f"{took * 1000:.0f} ms",
                  f"bob's room: {len(room['members'])} members, too_many_origins "
                  f"{bob.status()['counters']['drops'].get('too_many_origins', 0)}")

        log("one machine's 16 keys, each proving its own port, join past the open slots")
        sybils = [WireClient(f"sybil{i}", rooms=[ROOM], host="127.0.0.2") for i in range(16)]
        try:
            for sybil in sybils:
                sybil.meet(bob.address)
                sybil.join(bob.address)
            time.sleep(1)
            members = next(r for r in bob.status()["rooms"] if r["name"] == ROOM)["members"]
            seated = sum(1 for m in members if m["nick"].startswith("sybil"))
            dave, took = newcomer_chats(binary, base, "dave", bob)
            nodes.append(dave)
            table.add("strangers: one machine's 16 keys (each answering at its port) seated in reserved slots; "
                      "a newcomer's start to chatting both ways after",
                      f"{seated} of 16; {took * 1000:.0f} ms", "a host's share is 8 of 32")
        finally:
            for sybil in sybils:
                sybil.close()

        with WireClient("mallory") as mallory:
            mallory.meet(bob.address)
            for batch in range(10):
                records = [PeerRecord(fresh_key()[1], f"ghost{batch}-{n}", "192.0.2.7", 20_000 + batch * 32 + n)
                           for n in range(32)]
                mallory.probe(bob.address, peers=records)
            lat, missing = measure_latency(carol, bob, "ghosts", count, spacing)
            peers = len(bob.status()["peers"])
        table.add("strangers: latency carol -> bob p50 / p99, 320 made-up peers gossiped to bob",
                  f"{pct(lat, 50):.0f} / {pct(lat, 99):.0f} ms" if lat else "none shown",
                  f"{len(lat)} shown, {missing} missing; bob's peer table {peers} entries")

        # Last: the flood spends the budget of signature checks of host 127.0.0.1, which every
        # stranger of this bench shares (the fresh keys' joins above too).
        with BadSignatureFlood(bob.address) as flood:
            time.sleep(0.5)
            started, before = time.monotonic(), cpu_seconds(bob.process.pid)
            lat, missing = measure_latency(alice, bob, "badsig", count, spacing)
            busy = (cpu_seconds(bob.process.pid) - before) / (time.monotonic() - started)
        row(f"bad-signature flood at bob ({flood.sent} datagrams of {len(flood.origins)} joins)", lat, missing,
            f"; bob's CPU {busy * 100:.1f} % of a core")

        rss_before = bob.rss_kb()
        peak = rss_before
        cut = 0
        for _ in range(3):
            cut += big_frames(bob.address)
            peak = max(peak, bob.rss_kb())
        time.sleep(1)
        table.add("strangers: bob's RSS before / at most during / after, 32 x 4 MiB frames, 3 rounds",
                  f"{rss_before / 1024:.0f} / {peak / 1024:.0f} / {bob.rss_kb() / 1024:.0f} MB",
                  f"{cut} of 96 connections cut at the header")

        heap_before = memory_kb(bob.process.pid)["RssAnon"]
        with Churn(bob.address) as churn:
            time.sleep(10)
        grown = memory_kb(bob.process.pid)["RssAnon"] - heap_before
        table.add("strangers: bob's heap growth per sync connection, 16 threads churning for 10 s",
                  f"{grown * 1024 / max(churn.opened, 1):.0f} B",
                  f"{churn.opened} connections; grew {grown / 1024:.2f} MB")

        stored_before = bob.status()["counters"]["events_stored"]
        host, port = bob.address.rsplit(":", 1)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            throwaway_keys(lambda data: udp.sendto(data, (host, int(port))), keys=64, events=32)
        time.sleep(1)
        stored = bob.status()["counters"]["events_stored"] - stored_before
        size = sum(f.stat().st_size for f in bob.data_dir.rglob("*") if f.is_file()) / 1e6
        table.add("strangers: 64 throwaway keys x 32 events without a join: events bob stored, his data dir",
                  f"{stored}; {size:.1f} MB", "at most 16 strangers held at once (round 3: 21.5 MB)")

        # Last: carol dies while 100 keys that probed bob once sit silent in his table.
        silent_keys(bob.address, 100, source_host="127.0.0.3")
        time.sleep(0.5)
        since = len(bob.outputs)
        carol.process.kill()
        killed = time.monotonic()
        carol_id = carol.id
        while not any(o["type"] == "peer" and o.get("id") == carol_id and o.get("state") == "gone"
                      for o in list(bob.outputs)[since:]):
            if time.monotonic() - killed > 60:
                break
            time.sleep(0.05)
        table.add("strangers: time for bob to say carol is gone after she died, 100 silent keys in his table",
                  f"{time.monotonic() - killed:.1f} s", "round 3: 95.6 s (5.6 s without the keys)")

    finally:
        for node in nodes:
            stop_node(node)
