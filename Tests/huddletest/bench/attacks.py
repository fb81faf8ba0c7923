"""Figure 9: chat delivery latency alice -> bob (p50/p99/max) with nobody attacking, under an
amplification flood, and under a slowloris on bob's sync port (plus how long a late joiner takes
to get bob's 200-line history, with no attack, with the slowloris from one address, and with it
from 8 addresses taking every sync slot).

The attackers are here too, for Tests/e2e/test_attacks.py to use as well:

- ``AmplificationFlood``: datagrams to a node, each holding hundreds of copies of one valid
  signed event and one badly signed event of its own. A node that verified every event would
  spend hundreds of Ed25519 checks per datagram; one that screens copies first spends two.
- ``Slowloris``: TCP connections to a node's sync port that each trickle one byte of a valid
  sync request per second, reopened as soon as the node closes them, from an address of their
  own (127.0.0.2 on loopback: a peer at 127.0.0.1 is someone else).
"""

from __future__ import annotations

import errno
import os
import socket
import threading
import time

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from ..wire import (KIND_EVENTS, Chat, Event, VersionVector, enc_u16, encode_event, encode_sync_request,
                    envelope, frame, node_address, now_ms, sign_event)
from .harness import ROOM, BenchNode, Table, log, pct, stop_node, temp_dir, wait_until

MAX_DATAGRAM = 60_000


def fresh_key() -> tuple[Ed25519PrivateKey, bytes]:
    key = Ed25519PrivateKey.generate()
    return key, key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


# ---------------------------------------------------------------------------------------------
# Attackers

class AmplificationFlood:
    """A thread sending `target` datagrams of `copies` copies of one valid event (a chat, seq 1
    of a fresh key: ``good``) followed by one badly signed event (seq 2 of that key, a different
    text and random signature bytes in every datagram, so no two are alike), one every
    `interval` s (0: as fast as Python goes), until ``stop()`` or `limit` datagrams.

    A node that screens before it verifies shows ``good`` once, counts each bad event once as
    bad_signature and every copy of ``good`` but the first as a duplicate: after n datagrams,
    duplicates = n x copies - 1 and bad_signature = n, whatever the kernel dropped on the way."""

    def __init__(self, target, room: str = ROOM, copies: int = 300, interval: float = 0.002,
                 limit: int | None = None, text: str = "amplified hello"):
        self.target = node_address(target)
        self.room = room
        self.copies = copies
        self.interval = interval
        self.limit = limit
        self.key, self.id = fresh_key()
        self.good = sign_event(Event(self.id, 1, room, now_ms(), VersionVector(), Chat(text)), self.key)
        self._head = envelope(KIND_EVENTS, enc_u16(copies + 1) + encode_event(self.good) * copies)
        if len(self.datagram(10**9)) > MAX_DATAGRAM:
            raise ValueError(f"{copies} copies do not fit one {MAX_DATAGRAM}-byte datagram")
        self.sent = 0
        self.errors = 0
        self._stop = threading.Event()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._thread = threading.Thread(target=self._run, daemon=True, name="amplification-flood")

    def datagram(self, i: int) -> bytes:
        bad = Event(self.id, 2, self.room, now_ms(), VersionVector({self.id: 1}), Chat(f"bad {i}"))
        return self._head + encode_event(bad, signature=os.urandom(64))

    def start(self) -> "AmplificationFlood":
        self._thread.start()
        return self

    def _run(self) -> None:
        next_at = time.monotonic()
        while not self._stop.is_set() and (self.limit is None or self.sent < self.limit):
            try:
                self._sock.sendto(self.datagram(self.sent), self.target)
                self.sent += 1
            except OSError:
                self.errors += 1  # ENOBUFS and the like: a flood does not care
            if self.interval:
                next_at += self.interval
                delay = next_at - time.monotonic()
                if delay > 0:
                    self._stop.wait(delay)
                else:
                    next_at = time.monotonic()

    def wait(self, timeout: float = 60) -> None:
        """Until `limit` datagrams are sent."""
        self._thread.join(timeout)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)
        self._sock.close()

    def __enter__(self) -> "AmplificationFlood":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class Slowloris:
    """`count` TCP connections to `target`'s sync port from `source`, each sending one byte of a
    whole, valid syncRequest frame every `interval` s. Whatever the node closes (refused at once,
    or cut off for being slow) is opened again on the next tick, so `count` connections are
    attempted at all times until ``stop()``.

    ``opened`` counts connections made, ``closed`` those the node closed (refused or cut off),
    ``lifetimes`` how long each closed one had been open (s)."""

    def __init__(self, target, room: str = ROOM, count: int = 32, interval: float = 1.0,
                 source: str = "127.0.0.2"):
        self.target = node_address(target)
        self.count = count
        self.interval = interval
        self.source = source
        _, me = fresh_key()
        self.request = frame(encode_sync_request(me, room, VersionVector(), 64))
        self.opened = 0
        self.closed = 0
        self.connect_errors = 0
        self.bytes_sent = 0
        self.lifetimes: list[float] = []
        self._slots: list[tuple[socket.socket, float, int] | None] = [None] * count
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True, name="slowloris")

    @property
    def open_now(self) -> int:
        with self._lock:
            return sum(slot is not None for slot in self._slots)

    def start(self) -> "Slowloris":
        self._tick()
        self._thread.start()
        return self

    def _connect(self) -> socket.socket | None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.bind((self.source, 0))
            sock.settimeout(2)
            sock.connect(self.target)
            sock.setblocking(False)
            self.opened += 1
            return sock
        except OSError:
            sock.close()
            self.connect_errors += 1
            return None

    @staticmethod
    def _is_closed(sock: socket.socket) -> bool:
        try:
            data = sock.recv(65536)
            return data == b""  # EOF; anything else (a response) means it is alive
        except BlockingIOError:
            return False
        except OSError:
            return True

    def _tick(self) -> None:
        with self._lock:
            for i, slot in enumerate(self._slots):
                if slot is not None:
                    sock, opened_at, sent = slot
                    if self._is_closed(sock):
                        self._drop(i, sock, opened_at)
                        slot = None
                    else:
                        try:
                            sock.send(self.request[sent % len(self.request):sent % len(self.request) + 1])
                            self.bytes_sent += 1
                            self._slots[i] = (sock, opened_at, sent + 1)
                            continue
                        except OSError as error:
                            if error.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                                continue
                            self._drop(i, sock, opened_at)
                            slot = None
                if slot is None and not self._stop.is_set():
                    sock = self._connect()
                    if sock is not None:
                        self._slots[i] = (sock, time.monotonic(), 0)

    def _drop(self, i: int, sock: socket.socket, opened_at: float) -> None:
        sock.close()
        self.closed += 1
        self.lifetimes.append(time.monotonic() - opened_at)
        self._slots[i] = None

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._tick()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)
        with self._lock:
            for i, slot in enumerate(self._slots):
                if slot is not None:
                    slot[0].close()
                    self._slots[i] = None

    def __enter__(self) -> "Slowloris":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# ---------------------------------------------------------------------------------------------
# The figure

def measure_latency(sender: BenchNode, receiver: BenchNode, tag: str, count: int, spacing: float,
                    timeout: float = 30) -> tuple[list[int], int]:
    """`count` chats typed on `sender`, `spacing` s apart: sent_at -> shown_at on `receiver` (ms,
    both clocks of one machine), and how many were not shown within `timeout` s of the last."""
    texts = [f"{tag} {i}" for i in range(count)]
    for text in texts:
        sender.say(text)
        time.sleep(spacing)
    wanted = set(texts)
    try:
        wait_until(lambda: wanted <= {o["text"] for o in receiver.messages()}, timeout,
                   f"{receiver.name} to show every '{tag}' message", interval=0.1)
    except TimeoutError:
        pass
    sent = {o["text"]: o for o in sender.messages() if o["text"] in wanted}
    shown = {o["text"]: o for o in receiver.messages() if o["text"] in wanted}
    latencies = [shown[t]["shown_at"] - sent[t]["sent_at"] for t in texts if t in sent and t in shown]
    return latencies, count - len(latencies)


def late_joiner_history(binary: str, name: str, base, seed: BenchNode, texts: list[str],
                        timeout: float = 60) -> float:
    """Starts a node seeded with `seed` and returns the seconds from its start to showing every
    one of `texts`; stops it again."""
    started = time.monotonic()
    late = BenchNode(binary, name, base / name, room=ROOM, peers=[seed.address])
    try:
        wanted = set(texts)
        wait_until(lambda: wanted <= {o["text"] for o in late.messages()}, timeout,
                   f"{name} to show the whole history", interval=0.05)
        return time.monotonic() - started
    finally:
        stop_node(late)


def counters(node: BenchNode) -> dict:
    return node.status()["counters"]


def start_pair(binary: str, base) -> tuple[BenchNode, BenchNode]:
    """alice, and bob seeded with her, once each has seen the other join."""
    alice = BenchNode(binary, "alice", base / "alice", room=ROOM)
    bob = BenchNode(binary, "bob", base / "bob", room=ROOM, peers=[alice.address])
    for node, other in ((alice, "bob"), (bob, "alice")):
        node.wait_for(lambda o, n=other: o["type"] == "join" and o.get("nick") == n, timeout=30,
                      what=f"{other} joining")
    return alice, bob


def bench_attacks(binary: str, count: int, spacing: float, history: int, table: Table) -> None:
    base = temp_dir("attacks")
    alice, bob = start_pair(binary, base)
    nodes = [alice, bob]
    try:
        wait_until(lambda: all(any(p["state"] == "alive" for p in n.status()["peers"]) for n in nodes), 30,
                   "alice and bob alive to each other", interval=0.3)
        log(f"bob writes {history} history lines (a late joiner pulls them over TCP: more than 64)")
        for i in range(history):
            bob.say(f"history {i}")
        history_texts = [f"history {i}" for i in range(history)]
        alice.message(history_texts[-1], timeout=30)

        def row(condition: str, lat: list[int], missing: int) -> None:
            if not lat:
                table.add(f"attacks: latency alice -> bob, {condition}", "none shown", "", False)
                return
            table.add(f"attacks: latency alice -> bob p50 / p99 / max, {condition}",
                      f"{pct(lat, 50):.0f} / {pct(lat, 99):.0f} / {max(lat):.0f} ms",
                      f"{len(lat)} shown, {missing} missing")

        # Baseline.
        lat, missing = measure_latency(alice, bob, "base", count, spacing)
        row("no attack", lat, missing)
        base_history = late_joiner_history(binary, "carol", base, bob, history_texts)
        table.add("attacks: late joiner shows bob's history, no attack", f"{base_history * 1000:.0f} ms",
                  f"{history} lines")

        # Amplification flood at bob.
        before = counters(bob)
        with AmplificationFlood(bob.address, copies=300, interval=0.002) as flood:
            time.sleep(0.5)
            started, sent_before = time.monotonic(), flood.sent
            lat, missing = measure_latency(alice, bob, "flood", count, spacing)
            rate = (flood.sent - sent_before) / (time.monotonic() - started)
        time.sleep(1)  # what bob's socket still held
        after = counters(bob)
        bad = after["drops"].get("bad_signature", 0) - before["drops"].get("bad_signature", 0)
        dups = after["duplicates"] - before["duplicates"]
        amplified_limited = after["drops"].get("rate_limited", 0) - before["drops"].get("rate_limited", 0)
        row(f"amplification flood at bob ({rate:.0f} datagrams/s x {flood.copies + 1} events sent)",
            lat, missing)
        shown_good = sum(1 for o in bob.messages() if o["text"] == flood.good.body.text)
        table.note(f"amplification: {flood.sent} datagrams of {len(flood.datagram(0))} bytes sent "
                   f"({flood.copies} copies of one signed chat + 1 badly signed event each); bob counted "
                   f"{bad} bad_signature and {dups} duplicates ({bad} x {flood.copies} - 1 = "
                   f"{bad * flood.copies - 1}), so {bad} datagrams reached it and {amplified_limited} more were "
                   f"dropped unread over the rate limit (the kernel dropped the rest); "
                   f"the flooded chat shown {shown_good} time(s); bob's RSS {bob.rss_kb() / 1024:.1f} MB")

        # A flood of badly signed events from one address, as fast as Python sends: each one
        # that got through would cost bob an Ed25519 check.
        before = counters(bob)
        with AmplificationFlood(bob.address, copies=0, interval=0, text="flooded hello") as flood:
            time.sleep(0.5)
            started, sent_before = time.monotonic(), flood.sent
            lat, missing = measure_latency(alice, bob, "udpflood", count, spacing)
            rate = (flood.sent - sent_before) / (time.monotonic() - started)
        time.sleep(1)
        after = counters(bob)
        limited = after["drops"].get("rate_limited", 0) - before["drops"].get("rate_limited", 0)
        bad = after["drops"].get("bad_signature", 0) - before["drops"].get("bad_signature", 0)
        row(f"UDP flood at bob from one address ({rate:.0f} datagrams/s, a badly signed event each)", lat, missing)
        table.note(f"UDP flood: {flood.sent} datagrams sent from one socket; bob dropped {limited} unread "
                   f"(rate_limited: 400/s per sender, bursts of 800) and checked the signatures of {bad} "
                   f"(bad_signature); the kernel dropped the rest; bob's RSS {bob.rss_kb() / 1024:.1f} MB")

        # Slowloris on bob's sync port.
        before = counters(bob)
        with Slowloris(bob.address, count=32) as loris:
            time.sleep(1.5)
            lat, missing = measure_latency(alice, bob, "slowloris", count, spacing)
            row("slowloris on bob (32 connections, 1 byte/s)", lat, missing)
            loris_history = late_joiner_history(binary, "dave", base, bob, history_texts)
            table.add("attacks: late joiner shows bob's history, slowloris on bob",
                      f"{loris_history * 1000:.0f} ms", f"{history} lines")
            open_during = loris.open_now
        after = counters(bob)
        busy = after["drops"].get("sync_busy", 0) - before["drops"].get("sync_busy", 0)
        broken = after["drops"].get("sync_broken", 0) - before["drops"].get("sync_broken", 0)
        table.note(f"slowloris: 32 connections from {loris.source} (4 accepted at a time per address), "
                   f"{loris.opened} opened, {loris.closed} closed by bob, {open_during} open at the end; bob "
                   f"counted sync_busy {busy}, sync_broken {broken}; accepted ones lived "
                   f"{max(loris.lifetimes, default=0):.1f} s at most")

        # The same from 8 addresses, 4 connections each: every one of bob's 32 sync slots taken.
        before = counters(bob)
        lorises = [Slowloris(bob.address, count=4, source=f"127.0.0.{2 + i}") for i in range(8)]
        try:
            for loris in lorises:
                loris.start()
            time.sleep(1.5)
            full_history = late_joiner_history(binary, "erin", base, bob, history_texts)
            table.add("attacks: late joiner shows bob's history, slowloris from 8 addresses (all 32 sync slots)",
                      f"{full_history * 1000:.0f} ms", f"{history} lines")
        finally:
            for loris in lorises:
                loris.stop()
        after = counters(bob)
        busy = after["drops"].get("sync_busy", 0) - before["drops"].get("sync_busy", 0)
        table.note(f"slowloris from 8 addresses: bob refused {busy} sync connections meanwhile; a late joiner "
                   f"also gets history from digests answered with UDP pushes (64 events each), not only by pulls")
    finally:
        for node in nodes:
            stop_node(node)
