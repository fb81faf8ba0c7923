"""Figure 12: the console's keys on long lines, and the node's answers to a peer while pastes
arrive. carol's interactive console runs on a pseudo-terminal this script holds the other end of
(as a terminal emulator would); each key is written to it and timed until its echo (the redrawn
input row) comes back. Meanwhile a Python peer written from docs/PROTOCOL.md probes carol and
times each ack, and bob, a real node, reports whether carol ever looked troubled."""

from __future__ import annotations

import os
import subprocess
import threading
import time

from ..node import TEST_SHIELD, shield_flags
from ..processes import stop_process
from ..wire import Ack, WireClient
from .harness import LIVE_PROCS, ROOM, BenchNode, Table, log, pct, stop_node, temp_dir, wait_until

KEY_TARGET_MS = 5.0
PASTE_BYTES = 4_000
BIG_PASTE_BYTES = 64 * 1024


def ms3f(values: list[float]) -> str:
    return f"{pct(values, 50):.2f} / {pct(values, 99):.2f} / {max(values):.2f} ms"


class PtyConsole:
    """A node's interactive console on a pty: write keys, wait for what they draw."""

    def __init__(self, binary: str, base, peer: str):
        import fcntl
        import pty
        import termios

        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, b"\x18\x00\x64\x00\x00\x00\x00\x00")  # 24 x 100

        def own_terminal() -> None:
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.master = master
        # The shield off, as for every bench node but the spoiler audit's (node.TEST_SHIELD).
        self.process = subprocess.Popen(
            [binary, "run", "--name", "carol", "--data-dir", str(base / "carol"), "--no-mdns", "--room", ROOM,
             "--peer", peer, *shield_flags(TEST_SHIELD)], stdin=slave, stdout=slave, stderr=slave, preexec_fn=own_terminal,
            env={**os.environ, "LANG": "C.UTF-8", "TERM": "xterm-256color"})
        LIVE_PROCS.append(self.process)
        os.close(slave)
        self.screen = bytearray()
        self.changed = threading.Condition()
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:  # keep reading, or the node would block writing to a full pty
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            with self.changed:
                self.screen.extend(chunk)
                self.changed.notify_all()

    def key(self, data: bytes, marker: bytes, timeout: float = 10) -> float:
        """Writes `data` and returns the ms until `marker` and then the end of an input row
        (erase to end of line) appear in what the console drew after it."""
        with self.changed:
            start = len(self.screen)
        began = time.perf_counter()
        os.write(self.master, data)
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                drawn = bytes(self.screen[start:])
                at = drawn.find(marker)
                if at >= 0 and drawn.find(b"\x1b[K", at + len(marker)) >= 0:
                    return (time.perf_counter() - began) * 1000
                if time.monotonic() > deadline:
                    raise AssertionError(f"no {marker!r} within {timeout} s after {data[:40]!r}")
                self.changed.wait(0.5)

    def stop(self) -> None:
        try:
            os.write(self.master, b"\x15\x03")  # Ctrl-U, Ctrl-C: clear the line, quit
            self.process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        stop_process(self.process)
        try:
            os.close(self.master)
        except OSError:
            pass


def paste(text: str) -> bytes:
    return b"\x1b[200~" + text.encode() + b"\x1b[201~"


def bench_console(binary: str, rounds: int, table: Table) -> None:
    base = temp_dir("console")
    bob = BenchNode(binary, "bob", base / "bob", room=ROOM)
    carol = PtyConsole(binary, base, bob.address)
    try:
        bob.wait_for(lambda o: o["type"] == "join" and o["nick"] == "carol", timeout=20, what="carol's join")
        # The console is up (raw mode, bracketed paste on) once the prompt is drawn.
        wait_until(lambda: f"{ROOM}>".encode() in carol.screen, 20, "carol's prompt")
        time.sleep(0.3)
        line = ("abcdefg " * (PASTE_BYTES // 8 + 1))[:PASTE_BYTES]

        log(f"{rounds} pastes of {PASTE_BYTES:,} bytes, each then moved across and edited key by key")
        inserts: list[float] = []
        moves: list[float] = []
        edits: list[float] = []
        count = f"{PASTE_BYTES:,}/4,096".encode()
        for _ in range(rounds):
            inserts.append(carol.key(paste(line), count))
            moves.append(carol.key(b"\x01", b"\r"))  # Ctrl-A: the row from the line's start
            for _ in range(40):
                moves.append(carol.key(b"\x1b[C", b"\r"))  # Right
            moves.append(carol.key(b"\x05", b"\r"))  # Ctrl-E
            for _ in range(40):
                moves.append(carol.key(b"\x1b[D", b"\r"))  # Left
            moves.append(carol.key(b"\x1bb", b"\r"))  # Alt-B, a word left
            edits.append(carol.key(b"x", f"{PASTE_BYTES + 1:,}/4,096".encode()))
            edits.append(carol.key(b"\x7f", count))  # Backspace
            carol.key(b"\x05", b"\r")  # Ctrl-E, then Ctrl-U: the whole line goes
            carol.key(b"\x15", b"\r")
            time.sleep(0.02)
        table.add(f"insert a {PASTE_BYTES:,}-byte paste, key to echo (p50/p99/max, {len(inserts)})", ms3f(inserts),
                  f"target p99 <= {KEY_TARGET_MS:.0f} ms", pct(inserts, 99) <= KEY_TARGET_MS)
        table.add(f"move across it: Left/Right/Ctrl-A/E/Alt-B (p50/p99/max, {len(moves)})", ms3f(moves),
                  f"target p99 <= {KEY_TARGET_MS:.0f} ms", pct(moves, 99) <= KEY_TARGET_MS)
        table.add(f"type and delete in it, the count redrawn (p50/p99/max, {len(edits)})", ms3f(edits),
                  f"target p99 <= {KEY_TARGET_MS:.0f} ms", pct(edits, 99) <= KEY_TARGET_MS)

        log("a peer's probe -> ack round trips to carol, idle and while 64 KiB pastes arrive")
        idle, busy, offers = probes_during(carol, bob, rounds)
        troubled = [o for o in bob.outputs if o.get("type") == "peer" and o.get("nick") == "carol"
                    and o.get("state") != "alive"]
        table.add(f"probe -> ack to carol, idle (p50/p99/max, {len(idle)})", ms3f(idle))
        table.add(f"same, during {rounds} 64 KiB pastes + 64 KiB typed + Ctrl-A/E (p50/p99/max, {len(busy)})",
                  ms3f(busy), "target: never 'not answering'", not troubled)
        table.add(f"64 KiB paste -> offered as 17 messages (p50/p99/max, {len(offers)})", ms3f(offers))
        table.note("console keys: carol's console on a pty this script holds; each key is timed from its write to "
                   "the redrawn input row coming back (the pty round trip included). The probe row is a Python "
                   "peer (Tests/huddletest/wire.py) probing carol every 20 ms and timing each ack (its own thread "
                   f"scheduling included); bob, a real node, reported carol not alive {len(troubled)} times.")
    finally:
        carol.stop()
        stop_node(bob)


def probes_during(carol: PtyConsole, bob: BenchNode, rounds: int) -> tuple[list[float], list[float], list[float]]:
    """Probe round trips to carol for 2 s idle, then while pastes arrive; and how long each
    64 KiB bracketed paste took to be offered."""
    address = wait_until(lambda: carol_address(bob), 10, "carol's address from bob's status")
    samples: list[tuple[str, float]] = []
    phase = ["idle"]
    stop = threading.Event()
    with WireClient("dave", rooms=[ROOM]) as dave:
        dave.meet(address)

        def probe_loop() -> None:
            while not stop.is_set():
                began = time.perf_counter()
                sequence = dave.probe(address)
                try:
                    dave.recv(timeout=2, kind=Ack, predicate=lambda g: g.message.sequence == sequence)
                    samples.append((phase[0], (time.perf_counter() - began) * 1000))
                except TimeoutError:
                    samples.append((phase[0], 2000.0))
                time.sleep(0.02)

        prober = threading.Thread(target=probe_loop, daemon=True)
        prober.start()
        time.sleep(2)
        phase[0] = "busy"
        offers: list[float] = []
        big = ("hijklmn " * (BIG_PASTE_BYTES // 8))[:BIG_PASTE_BYTES]
        for _ in range(rounds):
            offers.append(carol.key(paste(big), b"send it as 17 messages?"))
            carol.key(b"\x1b", b"put away", timeout=10)  # Escape (known after 50 ms of silence)
            carol.key(big.encode(), b"4,096/4,096", timeout=20)  # unbracketed: fills the line, the rest refused
            for _ in range(10):
                carol.key(b"\x01", b"\r")
                carol.key(b"\x05", b"\r")
            carol.key(b"\x15", b"\r")  # Ctrl-U after Ctrl-E: the line is empty again
        time.sleep(0.5)
        stop.set()
        prober.join(timeout=5)
    idle = [ms for phase_, ms in samples if phase_ == "idle"]
    busy = [ms for phase_, ms in samples if phase_ == "busy"]
    return idle, busy, offers


def carol_address(bob: BenchNode) -> str | None:
    for peer in bob.status().get("peers", []):
        if peer.get("nick") == "carol" and peer.get("address"):
            return peer["address"]
    return None
