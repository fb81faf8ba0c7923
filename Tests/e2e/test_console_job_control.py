"""Ctrl-Z and `fg` in a real terminal: a tmux pane running an interactive bash with job control,
from which a person starts `huddle run`, suspends it halfway through a line, uses the shell, and
brings the node back with `fg`."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from huddletest.polling import poll
from huddletest.terminal_pane import TerminalPane, console_command

PROMPT = "shell$"


@pytest.fixture
def shell(tmp_path):
    """An interactive `bash --norc` in a tmux pane, prompt `shell$ `; the pane, its server and
    whatever still runs in it go at the end."""
    terminal = TerminalPane(["bash", "--norc", "--noprofile"], tmp_path / "shell-pane", env={"PS1": PROMPT + " "})
    terminal.wait_for(lambda rows: rows and rows[-1] == PROMPT, what="the shell's prompt")
    yield terminal
    for pid in jobs_of(terminal):
        subprocess.run(["kill", "-KILL", str(pid)], capture_output=True)
    terminal.close()


def jobs_of(terminal: TerminalPane) -> list[int]:
    """The processes bash started (the node), by pid."""
    try:
        bash = terminal.pid()  # the pane's sh runs bash
    except (IndexError, RuntimeError):
        return []
    out = subprocess.run(["pgrep", "-P", str(bash)], capture_output=True, text=True)
    return [int(pid) for pid in out.stdout.split()]


def process_state(pid: int) -> str:
    """R, S, T (stopped)... from /proc/PID/stat."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def terminal_flags(terminal: TerminalPane) -> set[str]:
    """The terminal's modes as they are now (`stty -a` on the pane's tty, from outside)."""
    out = subprocess.run(["stty", "-F", terminal.tty(), "-a"], capture_output=True, text=True, timeout=10)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


def test_ctrl_z_gives_the_shell_a_cooked_terminal_and_fg_brings_the_half_line_back(lan, shell, tmp_path, binary):
    bob = lan("bob")
    command = console_command(binary, "alice", tmp_path / "alice", "--peer", bob.address)
    shell.type(shlex.join(command))
    shell.press("Enter")
    shell.wait_for(lambda rows: shell.input_row() == "superbowl>", what="the console's prompt")
    bob.wait_for(lambda o: o["type"] == "join" and o["nick"] == "alice", what="alice's join")
    [node] = jobs_of(shell)

    shell.type("half a li")
    shell.wait_for(lambda rows: shell.input_row() == "superbowl> half a li", what="the half-typed line")
    shell.press("C-z")
    rows = shell.wait_for(lambda rows: rows[-1] == PROMPT and any("Stopped" in row for row in rows),
                          what="the job stopped and the shell's prompt back")
    assert process_state(node) == "T", f"the node is {process_state(node)}, not stopped"
    stopped_at = max(i for i, row in enumerate(rows) if "Stopped" in row)
    # The console took its footer down before it stopped: the screen above the job line does
    # not end in a prompt or a status line the console drew after giving the terminal back.
    assert not any(row.startswith("superbowl>") or row.startswith(" superbowl ·") for row in rows[:stopped_at]), \
        "the console drew its footer again before it stopped:\n" + "\n".join(rows)

    # The shell works line by line: the terminal is cooked.
    flags_file = tmp_path / "stty-while-stopped.txt"
    shell.type(f"stty -a > {shlex.quote(str(flags_file))}; echo stty-done")
    shell.press("Enter")
    shell.wait_for(lambda rows: rows[-2:] == ["stty-done", PROMPT], what="stty in the shell")
    flags = set(flags_file.read_text().split())
    assert {"icanon", "echo", "isig", "icrnl", "ixon"} <= flags, f"not a cooked terminal: {sorted(flags)}"
    assert process_state(node) == "T"

    shell.type("fg")
    shell.press("Enter")
    # The footer comes back whole: its rows reach the terminal in one draw, but the pane may be
    # read between the bytes of it (a clean clone's run read the prompt row before the status
    # row), so the wait is for both.
    rows = shell.wait_for(lambda rows: shell.input_row() == "superbowl> half a li" and len(rows) >= 2
                          and rows[-2].startswith(" superbowl · 1 peer"),
                          what="the console back with the half line and its status row")
    assert shell.cursor()[0] == len("superbowl> half a li"), rows
    # Editing keys work again, one by one: Left and Right move the cursor (on a terminal left
    # cooked they would be echoed as ^[[D^[[C and wait for Enter).
    shell.type("ne")
    shell.press("Left", "Left")
    shell.wait_for(lambda rows: shell.input_row() == "superbowl> half a line"
                   and shell.cursor()[0] == len("superbowl> half a li"), what="Left, Left after fg")
    shell.press("Right", "Right")
    shell.wait_for(lambda rows: shell.cursor()[0] == len("superbowl> half a line"), what="Right, Right after fg")
    # The console has the terminal in its own mode again: keys reach it one by one, unechoed.
    flags = terminal_flags(shell)
    assert "-icanon" in flags and "-echo" in flags, f"the console runs on a cooked terminal after fg: {sorted(flags)}"

    shell.press("Enter")
    assert bob.message("half a line")["nick"] == "alice"
    rows = shell.wait_for_text("alice: half a line")
    assert shell.input_row() == "superbowl>", rows

    shell.type("/quit")
    shell.press("Enter")
    shell.wait_for(lambda rows: rows[-1] == PROMPT, what="the shell's prompt after /quit")
    poll(lambda: not jobs_of(shell), timeout=10, what="the node gone")
    shell.type("exit")
    shell.press("Enter")
    shell.wait_until_exited()
    assert {"icanon", "echo", "isig"} <= shell.stty_flags()
