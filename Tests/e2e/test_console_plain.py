"""`huddle run --plain`: a terminal used line by line (a screen reader, a braille display, a
terminal that cannot redraw). In a real tmux pane: no prompt, no status line, no line editing;
the terminal stays cooked (the terminal itself echoes what is typed); what the node writes is
plain lines, checked in the bytes written to the terminal, not only in what tmux renders."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
from pathlib import Path

import pytest

from huddletest.polling import poll
from huddletest.terminal_pane import TerminalPane, console_command

# A control sequence (CSI ...), an OSC, or any other escape: what would move the cursor, erase,
# switch modes or colour text, rather than print.
CSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]")
ESCAPE = re.compile(rb"\x1b")


@pytest.fixture
def plain_pane(tmp_path, binary):
    """Starts `huddle run --plain` for alice in a tmux pane whose output is recorded, byte for
    byte, from before the node writes anything. Returns the pane and the recording's path."""
    panes: list[TerminalPane] = []

    def start(*extra: str, env: dict[str, str] | None = None) -> tuple[TerminalPane, Path]:
        workdir = tmp_path / f"plain-pane-{len(panes)}"
        go = workdir / "go"
        command = console_command(binary, "alice", tmp_path / "alice", "--plain", *extra)
        # The node starts once the recording runs: its first line is in the recording too.
        waiting = ["sh", "-c", f'until [ -e {shlex.quote(str(go))} ]; do sleep 0.02; done; exec "$@"', "sh", *command]
        terminal = TerminalPane(waiting, workdir, env=env)
        panes.append(terminal)
        recording = workdir / "written.bin"
        terminal.record(recording)
        go.touch()
        terminal.wait_for_text("you joined superbowl", timeout=30)
        return terminal, recording

    yield start
    for terminal in panes:
        if not terminal.exited():
            try:
                os.kill(terminal.pid(), signal.SIGKILL)  # the pane's sh exec'd the node
            except (IndexError, ProcessLookupError):
                pass
        terminal.close()


def terminal_flags(terminal: TerminalPane) -> set[str]:
    out = subprocess.run(["stty", "-F", terminal.tty(), "-a"], capture_output=True, text=True, timeout=10)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


def written(recording: Path) -> bytes:
    return recording.read_bytes() if recording.exists() else b""


def without_colours(data: bytes) -> bytes:
    return re.sub(rb"\x1b\[[0-9;]*m", b"", data)


def run_plain_session(lan, plain_pane, env=None):
    """bob (--json) and alice at a plain terminal: alice says a line, bob answers, alice asks
    /who. Returns bob, alice's pane and the bytes written to her terminal, once /who's answer
    is there (the node has written everything before it)."""
    bob = lan("bob")
    alice, recording = plain_pane("--peer", bob.address, env=env)
    bob.wait_for(lambda o: o["type"] == "join" and o["nick"] == "alice", what="alice's join")

    # The terminal is cooked: it echoes the keys itself and hands the node whole lines.
    flags = terminal_flags(alice)
    assert {"icanon", "echo", "isig", "icrnl"} <= flags, f"--plain took the terminal over: {sorted(flags)}"

    alice.type("hello from a plain terminal")
    alice.press("Enter")
    assert bob.message("hello from a plain terminal")["nick"] == "alice"
    bob.say("hi alice")
    alice.wait_for(lambda rows: any(row.endswith("bob: hi alice") for row in rows), what="bob's line")
    alice.type("/who")
    alice.press("Enter")
    alice.wait_for_text("bob: not calibrated with you yet")
    data = poll(lambda: b"not calibrated with you yet" in written(recording) and written(recording),
                timeout=10, what="/who's answer in the recording")
    return bob, alice, data


def check_plain_lines(alice: TerminalPane, data: bytes) -> None:
    """What a plain terminal must show: lines, no prompt, no status line, no drawing."""
    rows = alice.visible()
    assert not any(row.startswith("superbowl>") for row in rows), f"a prompt on a plain terminal:\n{rows}"
    assert not any(" · " in row and "peer" in row for row in rows), f"a status line on a plain terminal:\n{rows}"
    # Cursor movement, erasing, scroll regions, bracketed paste, alternate screens: none.
    drawing = [m.group() for m in CSI.finditer(data) if not m.group().endswith(b"m")]
    assert not drawing, f"--plain drew on the terminal: {drawing[:10]}"
    assert not ESCAPE.search(without_colours(data)), "escapes other than colours: " \
        f"{ESCAPE.findall(without_colours(data))[:10]}"
    # Every line the node wrote is a whole line: no carriage return rewriting a row.
    text = without_colours(data).decode("utf-8")
    assert "\r" not in text.replace("\r\n", "\n"), repr(text[-500:])
    lines = text.replace("\r\n", "\n").split("\n")
    # The typed line (the terminal's echo), then the node's line for it, then bob's line.
    typed = lines.index("hello from a plain terminal")
    mine = next(i for i, line in enumerate(lines) if line.endswith("alice: hello from a plain terminal"))
    theirs = next(i for i, line in enumerate(lines) if line.endswith("bob: hi alice"))
    assert typed < mine < theirs, lines
    assert re.fullmatch(r"~\d\d:\d\d:\d\d bob: hi alice", lines[theirs]), lines[theirs]
    assert lines[lines.index("/who") + 1] == "in superbowl:", lines


def test_plain_writes_lines_and_reads_them(lan, plain_pane):
    bob, alice, data = run_plain_session(lan, plain_pane)
    check_plain_lines(alice, data)

    alice.press("C-d")  # end of input, as on any line-by-line stdin
    alice.wait_until_exited()
    assert alice.exit_status() == 0, alice.visible()
    bob.wait_for(lambda o: o["type"] == "peer" and o["nick"] == "alice" and o.get("left"), what="alice's goodbye")
    assert {"icanon", "echo", "isig"} <= alice.stty_flags()


def test_plain_with_no_color_writes_no_escape_at_all(lan, plain_pane):
    """With NO_COLOR, what reaches a screen reader is text and line ends, nothing else."""
    bob, alice, data = run_plain_session(lan, plain_pane, env={"NO_COLOR": "1"})
    check_plain_lines(alice, data)
    assert b"\x1b" not in data, data[:500]
