"""Figure 7: keypress -> mark, Enter pressed at a known time in a terminal running the
interactive console, against the mark's `at` a peer receives: in a tmux pane (one-key and typed)
and on a pty this script holds."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import threading
import time
from pathlib import Path

from ..node import TEST_SHIELD, shield_flags
from ..processes import stop_process
from ..terminal_pane import TerminalPane, console_command
from .harness import LIVE_PROCS, ROOM, BenchNode, Table, log, ms3, pct, stop_node, temp_dir, wait_until


def bench_marks(binary: str, count: int, table: Table) -> None:
    """alice runs the interactive console in a tmux pane; bob (--json) proposes a moment, alice
    presses Enter when the prompt offers it, and bob reports the mark's `at`. The keypress time is
    taken just before `tmux send-keys Enter` is run; the spawn of that tmux client is part of the
    error measured (its whole duration is reported beside it)."""
    if shutil.which("tmux") is None:
        table.add("7. keypress -> mark", "skipped", "needs tmux (Scripts/bootstrap --test installs it)")
        return
    base = temp_dir("marks")
    bob = BenchNode(binary, "bob", base / "bob", room=ROOM)
    # The shield off, as for every bench node but the spoiler audit's (node.TEST_SHIELD says why).
    pane = TerminalPane(console_command(binary, "alice", base / "alice", "--peer", bob.address, room=ROOM),
                        base / "alice-pane")
    try:
        pane.wait_for(lambda rows: rows and rows[-1].startswith(ROOM), what="alice's prompt")
        bob.wait_for(lambda o: o["type"] == "join" and o["nick"] == "alice", timeout=20, what="alice's join")

        jitter = random.Random(7)

        def press_enter(label: str) -> tuple[float, float]:
            time.sleep(jitter.uniform(0.2, 0.5))  # not in step with any timer of the node
            before = time.time_ns()
            pane.press("Enter")
            after = time.time_ns()
            mark = bob.wait_for(lambda o: o["type"] == "mark" and o["nick"] == "alice" and o["label"] == label,
                                timeout=10, what=f"alice's mark of {label}")
            return mark["at"] - before // 1_000_000, (after - before) / 1e6

        one_key, typed, spawn = [], [], []
        log(f"{count} one-key marks: bob proposes, alice's prompt offers it, Enter on an empty line")
        for i in range(count):
            label = f"moment {i}"
            bob.say(f"/event {label}")
            pane.wait_for(lambda rows: rows and f"[Enter = {label}]" in rows[-1], timeout=10, what=f"offer {label}")
            error, took = press_enter(label)
            one_key.append(error)
            spawn.append(took)
        log(f"{count} typed marks: alice types /now LABEL, then Enter")
        for i in range(count):
            label = f"typed {i}"
            pane.type(f"/now {label}")
            pane.wait_for(lambda rows: rows and rows[-1].endswith(f"/now {label}"), timeout=10, what="the typed line")
            error, took = press_enter(label)
            typed.append(error)
            spawn.append(took)
        pane.close()
        direct = marks_through_a_pty(binary, base, count)
        table.add(f"keypress -> mark, Enter on an empty line (p50/p99/max, {count})", ms3(one_key),
                  "target p99 <= 20 ms", pct(one_key, 99) <= 20)
        table.add(f"keypress -> mark, /now LABEL then Enter (p50/p99/max, {count})", ms3(typed),
                  "target p99 <= 20 ms", pct(typed, 99) <= 20)
        table.add(f"same, Enter written straight to the node's pty (p50/p99/max, {count})", ms3(direct))
        table.note(f"keypress -> mark: error = mark.at - (wall clock just before `tmux send-keys Enter`), both in "
                   f"whole ms as marks carry them; the send-keys call itself took {ms3(spawn)} (p50/p99/max). "
                   f"Both paths stamp the mark when the Enter key reaches the node; what the one-key path "
                   f"saves a person is the typing of '/now LABEL' after the moment, which no script measures. "
                   f"The pty row writes the Enter byte to the node's terminal itself (no tmux client in "
                   f"between): what is left is the node's own keypress-to-timestamp delay, plus ms truncation.")
    finally:
        pane.close()
        stop_node(bob)


def marks_through_a_pty(binary: str, base: Path, count: int) -> list[float]:
    """carol's console runs on a pseudo-terminal this script holds the other end of; Enter is one
    byte written to it at a known time, as a terminal emulator does on a keypress. A room of its
    own, with dave proposing, so the moments of the tmux half are not offered to carol."""
    import fcntl
    import pty
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, b"\x18\x00\x64\x00\x00\x00\x00\x00")  # 24 x 100

    def own_terminal() -> None:  # the pty becomes carol's controlling terminal, carol its foreground
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    room = ROOM + "-pty"
    bob = BenchNode(binary, "dave", base / "dave", room=room)
    carol = subprocess.Popen([binary, "run", "--name", "carol", "--data-dir", str(base / "carol"), "--no-mdns",
                              "--room", room, "--peer", bob.address, *shield_flags(TEST_SHIELD)],
                             stdin=slave, stdout=slave, stderr=slave,
                             preexec_fn=own_terminal, env={**os.environ, "LANG": "C.UTF-8"})
    LIVE_PROCS.append(carol)
    os.close(slave)
    screen = bytearray()
    lock = threading.Lock()

    def drain() -> None:  # keep reading, or the node would block writing to a full pty
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return
            if not chunk:
                return
            with lock:
                screen.extend(chunk)

    threading.Thread(target=drain, daemon=True).start()
    errors: list[float] = []
    try:
        bob.wait_for(lambda o: o["type"] == "join" and o["nick"] == "carol", timeout=20, what="carol's join")
        jitter = random.Random(11)
        for i in range(count):
            label = f"pty {i}"
            bob.say(f"/event {label}")
            wait_until(lambda: f"[Enter = {label}]".encode() in screen, 10, f"carol's offer of {label}")
            time.sleep(jitter.uniform(0.2, 0.5))
            before = time.time_ns()
            os.write(master, b"\r")
            mark = bob.wait_for(lambda o: o["type"] == "mark" and o["nick"] == "carol" and o["label"] == label,
                                timeout=10, what=f"carol's mark of {label}")
            errors.append(mark["at"] - before // 1_000_000)
        return errors
    finally:
        os.write(master, b"\x03")  # Ctrl-C
        try:
            carol.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        stop_process(carol)
        os.close(master)
        stop_node(bob)
