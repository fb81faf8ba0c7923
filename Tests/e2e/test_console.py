"""The interactive console in a real terminal (a tmux pane): what a person typing sees while a
peer's messages arrive, one-key marks, and a terminal left as it was found."""

from __future__ import annotations

import os
import re
import signal
import socket
import time

import pytest

from huddletest.bench.attacks import fresh_key
from huddletest.node import TEST_SHIELD
from huddletest.terminal_pane import TerminalPane, console_command
from huddletest.wire import Event, Join, Mark, VersionVector, encode_events, now_ms, sign_event


@pytest.fixture
def pane(tmp_path, binary):
    """Starts `huddle run` for alice in a tmux pane; the pane and its server go at the end.
    `shield` as for node.Node: "off" (TEST_SHIELD) unless a test of the shield asks, `None` for
    the product's default (no flag, 90 s)."""
    panes: list[TerminalPane] = []

    def start(*extra: str, name: str = "alice", env: dict[str, str] | None = None,
              shield: str | float | None = TEST_SHIELD, **kwargs) -> TerminalPane:
        command = console_command(binary, name, tmp_path / name, *extra, shield=shield)
        terminal = TerminalPane(command, tmp_path / f"{name}-pane-{len(panes)}", env=env, **kwargs)
        panes.append(terminal)
        terminal.wait_for(lambda rows: rows and rows[-1].startswith("superbowl"), what="the prompt")
        return terminal

    yield start
    for terminal in panes:
        if not terminal.exited():
            try:
                os.kill(terminal.pid(), signal.SIGKILL)
            except (IndexError, ProcessLookupError):
                pass
        terminal.close()


def assert_cooked(terminal: TerminalPane) -> None:
    terminal.wait_until_exited()
    flags = terminal.stty_flags()
    assert {"icanon", "echo", "isig", "icrnl", "ixon"} <= flags, f"terminal left in raw mode: {sorted(flags)}"


def bob_and_alice_at_a_terminal(lan, pane):
    """bob (--json, driven by the test) and alice at the interactive console, in one room."""
    bob = lan("bob")
    alice = pane("--peer", bob.address)
    bob.wait_for(lambda o: o["type"] == "join" and o["nick"] == "alice", what="alice's join")
    return bob, alice


def test_a_peers_message_goes_above_the_line_being_typed(lan, pane):
    bob, alice = bob_and_alice_at_a_terminal(lan, pane)

    alice.type("what a cat")
    bob.say("hello alice")
    rows = alice.wait_for_text("bob: hello alice")
    # The peer's line is above the status line; the prompt and the half-typed line are intact,
    # the cursor right after them.
    assert rows[-1] == "superbowl> what a cat", rows
    assert "bob: hello alice" in rows[-3], rows
    assert "superbowl · 1 peer" in rows[-2], rows
    assert alice.cursor()[0] == len("superbowl> what a cat")

    alice.type("ch")
    alice.press("Enter")
    bob.message("what a catch")
    rows = alice.wait_for_text("alice: what a catch")
    # Shown once, as a message; no echo of the typed line left behind.
    assert sum("what a catch" in row for row in rows) == 1, rows
    assert rows[-1] == "superbowl>", rows


def test_enter_on_an_empty_line_marks_the_proposed_moment_at_the_keypress(lan, pane):
    bob, alice = bob_and_alice_at_a_terminal(lan, pane)

    bob.say("/now kickoff")
    alice.wait_for(lambda rows: rows[-1] == "superbowl [Enter = kickoff]>", what="the offer in the prompt")
    before = int(time.time() * 1000)
    alice.press("Enter")
    mark = bob.wait_for(lambda o: o["type"] == "mark" and o["nick"] == "alice", what="alice's mark")
    seen = int(time.time() * 1000)
    assert mark["label"] == "kickoff"
    # Timed at the keypress: not before it was sent, not after bob had it.
    assert before - 5 <= mark["at"] <= seen
    alice.wait_for(lambda rows: rows[-1] == "superbowl>", what="the offer gone from the prompt")
    bob.wait_for(lambda o: o["type"] == "offsets" and o["offsets"].get("alice") is not None, what="alice's offset")


def test_the_hot_key_marks_while_a_line_is_typed(lan, pane):
    bob, alice = bob_and_alice_at_a_terminal(lan, pane)
    bob.say("/event first pitch")
    alice.wait_for_text("[Enter = first pitch]")
    alice.type("here we go")
    alice.press("C-t")
    mark = bob.wait_for(lambda o: o["type"] == "mark" and o["nick"] == "alice", what="alice's mark")
    assert mark["label"] == "first pitch"
    rows = alice.wait_for(lambda rows: rows[-1] == "superbowl> here we go", what="the line kept")
    assert alice.cursor()[0] == len("superbowl> here we go"), rows


@pytest.mark.parametrize("how", ["/quit", "C-c", "C-d", "SIGTERM", "SIGHUP"])
def test_every_way_out_leaves_the_terminal_cooked(pane, how):
    alice = pane()
    alice.type("half a line")
    if how == "/quit":
        alice.press("C-u")
        alice.type("/quit")
        alice.press("Enter")
    elif how == "C-d":
        alice.press("C-u", "C-d")
    elif how == "C-c":
        alice.press("C-c", "C-c")  # the first clears the half-typed line, the second quits
    elif how.startswith("SIG"):
        os.kill(alice.pid(), getattr(signal, how))
    else:
        alice.press(how)
    assert_cooked(alice)
    rows = alice.visible()
    assert not any(row.startswith("superbowl>") for row in rows), f"the prompt was left behind: {rows}"
    assert alice.exit_status() == 0, rows


def test_a_crash_leaves_the_terminal_cooked(pane):
    # The default action, not Swift's interactive backtracer, so the crash ends at once.
    alice = pane(env={"SWIFT_BACKTRACE": "enable=no"})
    os.kill(alice.pid(), signal.SIGSEGV)
    assert_cooked(alice)
    assert alice.exit_status() == 128 + signal.SIGSEGV


def test_a_failed_start_never_touches_the_terminal(tmp_path, binary, lan):
    bob = lan("bob")
    # bob holds the port: carol cannot listen and stops before the console starts.
    terminal = TerminalPane([binary, "run", "--name", "carol", "--data-dir", str(tmp_path / "carol"), "--no-mdns",
                             "--port", str(bob.port)], tmp_path / "carol-pane")
    try:
        assert_cooked(terminal)
        assert f"port {bob.port} is already in use" in terminal.transcript(), terminal.transcript()
        assert terminal.exit_status() == 1
    finally:
        terminal.close()


def test_history_survives_a_restart(pane):
    alice = pane()
    alice.type("first words")
    alice.press("Enter")
    alice.wait_for_text("alice: first words")
    alice.press("C-d")
    assert_cooked(alice)
    again = pane()
    again.press("Up")
    again.wait_for(lambda rows: rows[-1] == "superbowl> first words", what="the line from history")


def test_colours_only_without_no_color(pane):
    coloured = pane()
    coloured.type("x")
    coloured.wait_for(lambda rows: rows[-1] == "superbowl> x")
    assert any("\x1b[" in row for row in coloured.screen(escapes=True))
    plain = pane(name="bob", env={"NO_COLOR": "1"})
    plain.type("x")
    plain.wait_for(lambda rows: rows[-1] == "superbowl> x")
    assert not any("\x1b[" in row for row in plain.screen(escapes=True))


def test_private_asks_for_the_passphrase_without_showing_it(lan, pane, tmp_path):
    bob = lan("bob", passphrase="touchdown")
    alice = pane("--peer", bob.address)

    alice.type("half a tho")
    alice.press("C-u")
    alice.type("/private superbowl")
    alice.press("Enter")
    alice.wait_for(lambda rows: rows[-1].startswith("passphrase for superbowl (hidden):"), what="the hidden prompt")
    alice.type("touchdown")
    # The hidden prompt draws nothing for a key, so nothing on screen says the node has read
    # them yet. Ctrl-L redraws (the status line and the prompt, alone on a cleared screen) once
    # the node has read every key typed before it: only then is the screen what they left.
    alice.press("C-l")
    rows = alice.wait_for(lambda rows: len(rows) == 2 and rows[-1].startswith("passphrase for superbowl (hidden):"),
                          what="the screen redrawn under the hidden prompt")
    assert not any("touchdown" in row for row in rows), rows
    assert "touchdown" not in alice.transcript()
    alice.press("Enter")
    bob.wait_for(lambda o: o["type"] == "join" and o["nick"] == "alice", what="alice in the private room")
    rows = alice.wait_for_text("superbowl (private)")
    assert not any("touchdown" in row for row in rows), rows

    bob.say("only for us")
    alice.wait_for_text("bob: only for us")
    alice.type("/quit")
    alice.press("Enter")
    assert_cooked(alice)
    history = (tmp_path / "alice" / "console-history").read_text()
    assert "/private superbowl" in history and "touchdown" not in history


def test_history_n_shows_the_last_n_messages_again(lan, pane):
    bob, alice = bob_and_alice_at_a_terminal(lan, pane)
    for text in ("first down", "second down", "third down"):
        bob.say(text)
        alice.wait_for_text(f"bob: {text}")

    alice.type("/history 2")
    alice.press("Enter")
    # The last two, by game time, again under the conversation, between a header and a footer
    # (so they are not taken for new messages); the first is not repeated.
    rows = alice.wait_for(lambda rows: any("end of history" in row for row in rows), what="the history")
    assert "history: the last 2 messages in superbowl" in rows[-6], rows
    assert rows[-5].endswith("bob: second down") and rows[-4].endswith("bob: third down"), rows
    assert "end of history" in rows[-3], rows
    assert sum("bob: second down" in row for row in rows) == 2, rows
    assert sum("bob: first down" in row for row in rows) == 1, rows
    assert rows[-1] == "superbowl>", rows


def test_ctrl_s_pauses_and_ctrl_q_resumes_with_the_line_kept(lan, pane):
    bob, alice = bob_and_alice_at_a_terminal(lan, pane)
    alice.type("half a li")
    # The pause is timed at the keypress: after the test began pressing, before the screen said
    # so; the resume likewise. The span shown lies between what those instants allow.
    pressing_pause = time.monotonic()
    alice.press("C-s")
    rows = alice.wait_for(lambda rows: "paused 0:0" in rows[-2], what="paused in the status line")
    paused_seen = time.monotonic()
    assert rows[-1] == "superbowl> half a li", rows
    time.sleep(1.2)  # the scenario: paused for over a second, so the span shown is at least 1 s
    pressing_resume = time.monotonic()
    alice.press("C-q")
    # The line and the status line are two draws: under load the screen can be read between them,
    # so wait for both (a status line that kept "paused" still fails, at the timeout).
    rows = alice.wait_for(lambda rows: any("resumed after " in row for row in rows) and "paused" not in rows[-2],
                          what="'resumed after' said and the status line no longer paused")
    resumed_seen = time.monotonic()
    line = next(row for row in rows if "resumed after " in row)
    minutes, seconds = re.search(r"resumed after (\d+):(\d\d)", line).groups()
    shown = int(minutes) * 60 + int(seconds)
    assert int(pressing_resume - paused_seen) <= shown <= int(resumed_seen - pressing_pause), line
    assert "paused" not in rows[-2] and rows[-1] == "superbowl> half a li", rows


def test_a_mark_signed_at_the_beginning_of_time_crashes_no_console(lan, pane):
    """A room member may sign any i64 ms as an event's time. mallory joins and marks "kickoff" at
    the earliest moment the wire can name (-2^63 ms), sending only to bob; alice gets it from bob.
    Before times were types, the console's status line asked what was on offer to mark,
    subtracted that time from the clock and trapped (signal 4): one signed datagram took down
    every reader at a terminal. Now the mark is long over and nothing is offered."""
    bob, alice = bob_and_alice_at_a_terminal(lan, pane)
    key, origin = fresh_key()
    join = sign_event(Event(origin, 1, "superbowl", now_ms(), VersionVector({}), Join("mallory")), key)
    ancient = sign_event(Event(origin, 2, "superbowl", -(1 << 63), VersionVector({origin: 1}), Mark("kickoff")), key)
    host, port = bob.address.rsplit(":", 1)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.sendto(encode_events([join, ancient]), (host, int(port)))
    alice.wait_for_text("mallory joined superbowl")
    alice.type("still standing")
    alice.press("Enter")
    bob.message("still standing")
    rows = alice.wait_for_text("alice: still standing")
    assert not alice.exited(), alice.transcript()
    assert not any("kickoff" in row for row in rows[-2:]), rows
