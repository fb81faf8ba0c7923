"""Waiting for a condition in tests, by polling: no fixed sleeps where a check can say when."""

from __future__ import annotations

import time


def poll(check, timeout: float = 15, interval: float = 0.1, what: str = "condition"):
    """`check()`'s first truthy value within `timeout` s, else an AssertionError naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {timeout} s")
        time.sleep(interval)
