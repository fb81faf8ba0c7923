"""Real `huddle run` processes on loopback, driven through stdin and read through --json."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .binary import huddle_binary
from .polling import poll

# The shield (issue 29): a reader with no offset to a writer holds the writer's words for 90 s by
# default. Tests of other features (delivery, replication, membership, the console, the tools)
# were written for readers who see an unplaced writer at once and would wait 90 s for every
# message, so the nodes they start run with `--shield off`. The shield has tests of its own
# (Tests/e2e/test_shield.py, and the spoiler audit of Scripts/bench) which start nodes with
# `shield=None`: no flag, the product's default, exactly what a viewer gets.
TEST_SHIELD = "off"


def shield_flags(shield: str | float | None) -> list[str]:
    """`huddle run`'s flags for `shield`: `--shield off`, `--shield 4`, or none for `None` (the
    product's default, 90 s)."""
    if shield is None:
        return []
    if isinstance(shield, float) and shield.is_integer():
        shield = int(shield)
    return ["--shield", str(shield)]


class Node:
    """One viewer: a `huddle run --json` process with its own data dir."""

    def __init__(self, binary: str, name: str, data_dir: Path, room: str | None = "superbowl",
                 peers: list[str] = (), port: int = 0, console: bool = True, mdns: bool = False,
                 launcher: list[str] = (), host_address: str = "127.0.0.1", passphrase: str | None = None,
                 extra: list[str] = (), shield: str | float | None = TEST_SHIELD, env: dict[str, str] | None = None):
        """`launcher` prefixes the command (e.g. `Scripts/lan exec h1`); `host_address` is where
        peers reach this node; `extra` is appended to `huddle run`'s flags (`--audio-file F`).
        `shield` is `--shield`'s value: "off" unless a test asks (see TEST_SHIELD), `None` for no
        flag at all (the product's default, 90 s), or seconds (`4`). `env` is added to the
        process's environment (`HUDDLE_BOOT_ID`, to play a reboot).
        HUDDLE_TEST_LOG_LEVEL=debug makes every node log at debug level to its stderr file."""
        self.name = name
        self.data_dir = data_dir
        self.host_address = host_address
        args = [*launcher, binary, "run", "--name", name, "--data-dir", str(data_dir), "--json",
                "--port", str(port), "--log-level", os.environ.get("HUDDLE_TEST_LOG_LEVEL", "info")]
        if not mdns:
            args.append("--no-mdns")
        if room:
            args += ["--room", room]
        if passphrase is not None:
            data_dir.parent.mkdir(parents=True, exist_ok=True)
            secret = data_dir.parent / f"{name}.passphrase"
            secret.write_text(passphrase + "\n")
            args += ["--passphrase-file", str(secret)]
        for peer in peers:
            args += ["--peer", peer]
        if not console:
            args.append("--no-console")
        args += shield_flags(shield)
        args += list(extra)
        self.stderr_path = data_dir.parent / f"{name}-{int(time.time() * 1000)}.stderr"
        data_dir.parent.mkdir(parents=True, exist_ok=True)
        self._stderr = open(self.stderr_path, "w")
        self.process = subprocess.Popen(
            args, stdin=subprocess.PIPE if console else subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=self._stderr, text=True, bufsize=1, env={**os.environ, **(env or {})})
        self.lines: queue.Queue[dict] = queue.Queue()
        self.seen: list[dict] = []
        self.raw: list[str] = []
        self.outputs: list[dict] = []  # everything, in order, never consumed
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        try:
            ready = self.wait_for(lambda o: o["type"] == "ready", timeout=30, what="ready")
        except BaseException:
            # Not handed to any fixture yet: nobody else would stop it.
            self.process.kill()
            self.process.wait()
            raise
        self.id = ready["id"]
        self.port = ready["port"]

    @property
    def address(self) -> str:
        return f"{self.host_address}:{self.port}"

    def _read(self) -> None:
        for line in self.process.stdout:
            self.raw.append(line)
            obj = json.loads(line)
            self.outputs.append(obj)
            self.lines.put(obj)

    def say(self, line: str) -> None:
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def wait_for(self, predicate, timeout: float = 15, what: str = "output") -> dict:
        """The first output (seen before or arriving within `timeout`) matching `predicate`."""
        deadline = time.monotonic() + timeout
        for obj in self.seen:
            if predicate(obj):
                self.seen.remove(obj)
                return obj
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(
                    f"{self.name}: no {what} within {timeout} s; saw {self.seen[-10:]}; "
                    f"stderr tail: {self.stderr_path.read_text()[-2000:]}")
            try:
                obj = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if predicate(obj):
                return obj
            self.seen.append(obj)

    def message(self, text: str, timeout: float = 15) -> dict:
        return self.wait_for(lambda o: o["type"] == "message" and o["text"] == text, timeout, f"message {text!r}")

    def shown_texts(self) -> list[str]:
        """The text of every message this node has shown so far, in order."""
        return [o["text"] for o in list(self.outputs) if o["type"] == "message"]

    def status(self) -> dict:
        # The control socket is a file in the data dir: reachable from any network namespace.
        out = subprocess.run([huddle_binary(), "status", "--json", "--data-dir", str(self.data_dir)],
                             capture_output=True, text=True, timeout=10)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    def quit(self, timeout: float = 10) -> int:
        if self.process.poll() is None:
            try:
                self.say("/quit")
            except (BrokenPipeError, ValueError):
                pass
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._stderr.close()
        return self.process.returncode

    def kill9(self) -> None:
        # With a launcher (Scripts/lan exec) every link execs the next: the node has this pid.
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self._stderr.close()


def kill_all(nodes: Iterable[Node]) -> None:
    """SIGKILLs whichever of `nodes` still run: the last word of a fixture or script, whatever
    state a failure left them in."""
    for node in nodes:
        if node.process.poll() is None:
            node.process.kill()
            node.process.wait()


# Timing checks compare with what the test itself set up and measured, never with nominal
# figures: a sleep on a busy machine runs long, and a node reads a typed line when the scheduler
# lets it. What the test knows of a node's time for a line is a window: after the test typed it,
# before the test saw the node answer (``Instant``); offsets are checked against those windows.
# What is left is how late a node may show a held message (a timer firing late) or receive one
# (loopback, a busy receiver), in ms, with both cores of the machine busy:
TIMING_TOLERANCE_MS = 250


@dataclass(frozen=True)
class Instant:
    """A line typed into a node: the node's own time for it (when it read the line) lies
    between `typed` and `seen`, in time.monotonic() seconds, however busy the machine."""
    typed: float
    seen: float

    def __sub__(self, other: "Instant") -> tuple[float, float]:
        """The ms from `other`'s time to this one's: at least, at most."""
        return (self.typed - other.seen) * 1000, (self.seen - other.typed) * 1000


def answered(node: Node, line: str, answer, what: str = "its answer") -> tuple[Instant, dict]:
    """Types `line` into `node` and waits for the output `answer(o)` accepts: when, and that output."""
    typed = time.monotonic()
    node.say(line)
    output = node.wait_for(answer, what=what)
    return Instant(typed, time.monotonic()), output


def mark(node: Node, label: str) -> Instant:
    """`/now LABEL` on `node`, until the node shows its own mark."""
    instant, _ = answered(node, f"/now {label}", lambda o: o["type"] == "mark" and o["id"] == node.id
                          and o["label"].casefold() == label.casefold(), what=f"its own mark of {label}")
    return instant


def within(value: float, window: tuple[float, float], slack: float = 2) -> bool:
    """Whether `value` (ms) lies in `window`, give or take `slack` ms of rounding."""
    return window[0] - slack <= value <= window[1] + slack


def calibrate(ahead: Node, behind: Node, seconds: float, label: str = "kickoff") -> tuple[float, float]:
    """Makes `behind`'s stream about `seconds` later than `ahead`'s: `ahead` marks `label`, and
    `behind` marks it `seconds` later (or once the first mark has reached it, if that takes
    longer). Returns once both nodes have the offset, with the window the test set it up in
    (ms, at least and at most, from when each mark was typed and seen): the offset both nodes
    found must lie in it. Compare timings with that, not with `seconds`."""
    first = mark(ahead, label)
    behind.wait_for(lambda o: o["type"] == "mark" and o["nick"] == ahead.name)
    time.sleep(max(0.0, first.typed + seconds - time.monotonic()))
    set_up = mark(behind, label) - first
    for node in (ahead, behind):
        offsets = node.wait_for(lambda o: o["type"] == "offsets" and o["offsets"].get(behind.name) is not None
                                and o["offsets"].get(ahead.name) is not None)["offsets"]
        found = offsets[behind.name] - offsets[ahead.name]
        assert within(found, set_up), f"{node.name} found {found} ms, set up {set_up[0]:.0f}..{set_up[1]:.0f} ms"
    return set_up


# ---------------------------------------------------------------------------------------------
# Proofs that a node got somewhere: what a negative check ("X was not shown", "nothing more was
# counted") waits for instead of a sleep. Each returns once the node has provably dealt with
# everything before a point; a check made then can fail.

def handled(node: Node, timeout: float = 15) -> dict:
    """Types `/who` into `node` and waits for its answer. A node deals with typed lines, datagrams
    and timers one at a time and prints in order, so once the answer is out, every line typed
    before it has been dealt with and everything the node printed before is in `node.outputs`.
    Returns the answer (an `info` line, "in ROOM: ...", or, in no room, the `error` saying so)."""
    since = len(node.outputs)
    node.say("/who")

    def is_answer(o: dict) -> bool:
        return ((o["type"] == "info" and o["message"].startswith("in "))
                or (o["type"] == "error" and o["message"].startswith("you are not in a room")))

    answer = poll(lambda: next((o for o in list(node.outputs)[since:] if is_answer(o)), None),
                  timeout=timeout, interval=0.02, what=f"{node.name}'s answer to /who")
    node.wait_for(lambda o: o is answer, timeout=timeout, what="the answer to /who")  # taken: no later wait sees it
    return answer


def room_vector(node: Node, room: str = "superbowl") -> dict[str, int]:
    """`node`'s version vector of `room` (by its name), from its status: what it holds."""
    return next((r["version_vector"] for r in node.status()["rooms"] if r["name"] == room), {})


def holds_all_of(node: Node, others: Iterable[Node], room: str = "superbowl", timeout: float = 20,
                 their_room: str | None = None) -> None:
    """Waits until `node` holds every event of `room` that each of `others` holds now (its version
    vector covers theirs), then until it has dealt with all of it (`handled`): whatever it would
    show of them is shown by then. `their_room` is the room's name on the others, if it differs
    (a direct room is `@bob` on alice and `@alice` on bob)."""
    others = list(others)
    wanted: dict[str, int] = {}
    for other in others:
        for origin, seq in room_vector(other, their_room or room).items():
            wanted[origin] = max(wanted.get(origin, 0), seq)

    def covered() -> bool:
        have = room_vector(node, room)
        return all(have.get(origin, 0) >= seq for origin, seq in wanted.items())

    poll(covered, timeout=timeout, interval=0.1, what=f"{node.name} holding every event of {room} "
         f"that {', '.join(o.name for o in others)} hold")
    handled(node)


def heard_since(node: Node, others: Iterable[Node], since: float, timeout: float = 15) -> None:
    """Waits until `node` has heard from each of `others` directly (a probe or an ack: its status
    says how long ago) after `since` (time.monotonic(); the node's clock is CLOCK_MONOTONIC too).
    A node reads its UDP socket in order, so a datagram they sent it well before `since` has been
    dealt with by then; then waits for `handled`. For a node that cannot show what they send
    (another room, no passphrase), the proof it has had its chance to."""
    def heard_all() -> bool:
        asked = time.monotonic()  # the node answers later: what it says is at least this late
        peers = {p["id"]: p for p in node.status()["peers"]}
        for other in others:
            seen_ms = peers.get(other.id, {}).get("last_seen_ms")
            if seen_ms is None or asked - seen_ms / 1000 <= since:
                return False
        return True

    poll(heard_all, timeout=timeout, interval=0.1,
         what=f"{node.name} hearing from {', '.join(o.name for o in others)} again")
    handled(node)


def alive_to_each_other(*nodes: Node, timeout: float = 15) -> None:
    """Waits until each of `nodes` has printed each other one alive (a `peer` line, in
    `node.outputs`). Membership admits a peer from its own signed probe or ack, and the node reads
    the key for direct messages on that card in the same step: from then on /msg works both ways."""
    for node in nodes:
        for other in nodes:
            if other is not node:
                poll(lambda n=node, o=other: any(x["type"] == "peer" and x["id"] == o.id and x["state"] == "alive"
                                                 for x in list(n.outputs)),
                     timeout=timeout, interval=0.05, what=f"{node.name} seeing {other.name} alive")


# Not a Huddle datagram: counted under drops["malformed"] and nothing else.
NOT_HUDDLE = b"GET / HTTP/1.1\r\n\r\n"


def dealt_with_datagrams(node: Node, send, timeout: float = 15) -> None:
    """Sends `node`, with `send(data)` (the socket the datagrams under test went out of), one
    datagram it drops as malformed, and waits until it has counted it. Loopback keeps one
    socket's datagrams in order and a node reads its socket in order: every datagram sent before
    it has been dealt with. (The node's counters then hold one more malformed drop and one more
    rejected datagram.)"""
    before = node.status()["counters"]["drops"].get("malformed", 0)
    send(NOT_HUDDLE)
    poll(lambda: node.status()["counters"]["drops"].get("malformed", 0) > before, timeout=timeout, interval=0.05,
         what=f"{node.name} counting the last datagram sent")
