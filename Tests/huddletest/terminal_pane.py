"""A real terminal for the interactive console: a tmux pane on a private tmux server, typed into
with send-keys and read with capture-pane, as a person at the keyboard would see it."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
import time
from pathlib import Path

from .node import TEST_SHIELD, shield_flags


def console_command(binary: str, name: str, data_dir: Path, *extra: str, room: str | None = "superbowl",
                    shield: str | float | None = TEST_SHIELD) -> list[str]:
    """`huddle run` for a person at the console (no --json, no mDNS), for a pane or a pty. As for
    node.Node, `shield` is "off" unless a test of the shield asks: `None` runs the product's
    default (no flag, 90 s), a number that many seconds (node.TEST_SHIELD says why)."""
    command = [binary, "run", "--name", name, "--data-dir", str(data_dir), "--no-mdns"]
    if room:
        command += ["--room", room]
    return command + shield_flags(shield) + list(extra)


class TerminalPane:
    """One tmux pane running `command` through sh, kept on screen after the command exits.

    After the command, the pane's shell writes `stty -a` to `stty_path`, so a test can check the
    node gave the terminal back in cooked mode."""

    def __init__(self, command: list[str], workdir: Path, columns: int = 100, rows: int = 20,
                 env: dict[str, str] | None = None):
        self.socket = f"huddle-test-{os.getpid()}-{time.monotonic_ns()}"
        self.stty_path = workdir / "stty-after-exit.txt"
        workdir.mkdir(parents=True, exist_ok=True)
        environment = {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "xterm-256color", **(env or {})}
        exports = " ".join(f"{key}={shlex.quote(value)}" for key, value in environment.items())
        script = (f"export {exports}; {shlex.join(command)}; echo \"exit=$?\"; "
                  f"stty -a > {shlex.quote(str(self.stty_path))}")
        config = workdir / "tmux.conf"
        config.write_text("set -g remain-on-exit on\nset -g status off\n")
        self._tmux("-f", str(config), "new-session", "-d", "-x", str(columns), "-y", str(rows),
                   "sh", "-c", script)

    def _tmux(self, *args: str) -> str:
        out = subprocess.run(["tmux", "-u", "-L", self.socket, *args], capture_output=True, text=True,
                             timeout=10, env={**os.environ, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"})
        if out.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {out.stderr.strip()}")
        return out.stdout

    def type(self, text: str) -> None:
        """Types text literally, character by character as the terminal sends it."""
        self._tmux("send-keys", "-l", text)

    def paste(self, text: str) -> None:
        """Pastes text as a terminal does on a paste: in bracketed-paste markers when the program
        asked for them (tmux paste-buffer -p), line breaks as CR."""
        # From a file: tmux refuses a command line as long as a big paste.
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".paste", delete=False) as file:
            file.write(text)
        try:
            self._tmux("load-buffer", "-b", "huddle-test", file.name)
        finally:
            os.unlink(file.name)
        self._tmux("paste-buffer", "-p", "-d", "-b", "huddle-test")

    def record(self, path: Path) -> None:
        """From now on, appends every byte the pane's program writes to its terminal (and the
        terminal's echo of what is typed) to `path`, as written, escapes and all: what a screen
        reader or a log would get, rather than what tmux renders (tmux pipe-pane)."""
        self._tmux("pipe-pane", "-o", f"cat >> {shlex.quote(str(path))}")

    def tty(self) -> str:
        """The pane's terminal device (/dev/pts/N): `stty -F` reads its modes from outside."""
        return self._tmux("display-message", "-p", "#{pane_tty}").strip()

    def press(self, *keys: str) -> None:
        """Presses named keys: Enter, Left, Up, BSpace, Tab, C-c, C-d, C-t..."""
        self._tmux("send-keys", *keys)

    def screen(self, escapes: bool = False) -> list[str]:
        """The visible rows, trailing blanks trimmed (with `escapes`, SGR colours kept)."""
        args = ["capture-pane", "-p"] + (["-e"] if escapes else [])
        return [line.rstrip() for line in self._tmux(*args).split("\n")]

    def transcript(self) -> str:
        """Everything the pane showed, its scrollback too, with wrapped rows joined back."""
        return self._tmux("capture-pane", "-p", "-J", "-S", "-")

    def visible(self) -> list[str]:
        rows = self.screen()
        while rows and not rows[-1]:
            rows.pop()
        return rows

    def cursor(self) -> tuple[int, int]:
        x, y = self._tmux("display-message", "-p", "#{cursor_x} #{cursor_y}").split()
        return int(x), int(y)

    def input_row(self) -> str:
        """The row the cursor is on: the console's input line."""
        return self.screen()[self.cursor()[1]]

    def pid(self) -> int:
        """The pid of the command (the pane's shell's child)."""
        shell = self._tmux("display-message", "-p", "#{pane_pid}").strip()
        out = subprocess.run(["pgrep", "-P", shell], capture_output=True, text=True)
        return int(out.stdout.split()[0])

    def exited(self) -> bool:
        return self._tmux("display-message", "-p", "#{pane_dead}").strip() == "1"

    def wait_for(self, predicate, timeout: float = 15, what: str = "screen") -> list[str]:
        """Polls the screen until `predicate(rows)` holds."""
        deadline = time.monotonic() + timeout
        while True:
            rows = self.visible()
            if predicate(rows):
                return rows
            if time.monotonic() > deadline:
                raise AssertionError(f"no {what} within {timeout} s; screen:\n" + "\n".join(rows))
            time.sleep(0.05)

    def wait_for_text(self, text: str, timeout: float = 15) -> list[str]:
        return self.wait_for(lambda rows: any(text in row for row in rows), timeout, repr(text))

    def wait_until_exited(self, timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while not self.exited() or not self.stty_path.exists():
            if time.monotonic() > deadline:
                raise AssertionError("the pane's command did not exit; screen:\n" + "\n".join(self.visible()))
            time.sleep(0.05)

    def exit_status(self) -> int:
        """The command's exit status, as the pane's shell printed it."""
        rows = [row for row in self.visible() if row.startswith("exit=")]
        assert rows, "the command has not exited:\n" + "\n".join(self.visible())
        return int(rows[-1].removeprefix("exit="))

    def stty_flags(self) -> set[str]:
        """The terminal's flags after the command exited (`icanon`, `-icanon`, `echo`...)."""
        return set(self.stty_path.read_text().split())

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=10)
        # A killed server leaves its socket file behind; one per test would pile up in /tmp.
        socket_dir = Path(os.environ.get("TMUX_TMPDIR", "/tmp")) / f"tmux-{os.getuid()}"
        (socket_dir / self.socket).unlink(missing_ok=True)
