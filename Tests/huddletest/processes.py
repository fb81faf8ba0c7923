"""Stopping a child process we started, by its pid and nothing broader."""

import signal
import subprocess


def stop_process(proc: subprocess.Popen, first: int = signal.SIGTERM, grace: float = 5.0) -> None:
    """Sends `first`, waits `grace` seconds, then SIGKILLs: a child that has traps gets to run
    them, and one that hangs still goes."""
    if proc.poll() is not None:
        return
    try:
        proc.send_signal(first)
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
    except ProcessLookupError:
        pass
