"""The simulated LAN of Scripts/lan (docs/LAN.md), from Python.

Each user of it has a bed of its own, named by a tag (namespaces huddle-TAG-*, state in
/tmp/huddle-lan-TAG), so the LAN tests, the demo and the bench never touch one another's hosts
or a developer's."""

import os
import signal
import subprocess

from . import ROOT
from .processes import stop_process

SCRIPT = str(ROOT / "Scripts" / "lan")


class Bed:
    """Scripts/lan under one tag. HUDDLE_LAN_DIR is left out of everything run here: a
    developer's state dir would otherwise stand in for the tag's, and point us at their bed."""

    def __init__(self, tag: str):
        self.tag = tag

    def run(self, *args: str, check: bool = True, timeout: float = 120,
            own_session: bool = False) -> subprocess.CompletedProcess:
        """`Scripts/lan ARGS`, its output captured. If we are interrupted meanwhile, it gets a
        SIGTERM and time to run its own traps (an interrupted `up` removes its half-built bed)
        instead of a SIGKILL. In `own_session`, a Ctrl-C at the terminal does not reach it."""
        env = {key: value for key, value in os.environ.items() if key != "HUDDLE_LAN_DIR"}
        env["HUDDLE_LAN_TAG"] = self.tag
        proc = subprocess.Popen([SCRIPT, *args], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=own_session)
        try:
            out, err = proc.communicate(timeout=timeout)
        except BaseException:
            stop_process(proc, signal.SIGTERM, grace=60)
            raise
        done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        if check:
            done.check_returncode()
        return done

    def down(self) -> subprocess.CompletedProcess:
        """`Scripts/lan down`, which Ctrl-C, SIGTERM and SIGHUP wait for: one cut short would
        leave namespaces and avahi-daemons behind. Only from the main thread, which is where
        Python lets signal handlers be set."""
        signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        handlers = {s: signal.signal(s, signal.SIG_IGN) for s in signals}
        try:
            return self.run("down", check=False, own_session=True)
        finally:
            for s, handler in handlers.items():
                signal.signal(s, handler)

    def address(self, host: str) -> str:
        """Where peers reach `host` (h1 is 192.0.2.11)."""
        return self.run("addr", host).stdout.strip()

    def on_host(self, host: str, **env: str) -> list[str]:
        """The prefix that runs a command on `host`, with `env` added to its environment. Every
        link execs the next, so the process started with it has the command's own pid."""
        return ["env", "-u", "HUDDLE_LAN_DIR", f"HUDDLE_LAN_TAG={self.tag}",
                *(f"{key}={value}" for key, value in env.items()), SCRIPT, "exec", host]
