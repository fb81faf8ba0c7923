"""The simulator as a user runs it: one JSON object, and a seed that replays across processes
(each process hashes with its own random seed, so an order taken from a dictionary would show)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path


def simulate(binary: str, *args: str) -> dict:
    simulator = str(Path(binary).parent / "huddle-simulate")
    out = subprocess.run([simulator, *args, "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_seed_replays_in_another_process(binary):
    args = ("--nodes", "8", "--latency-ms", "50", "--loss", "0.2", "--broadcasts", "40", "--seed", "5")
    first, second = simulate(binary, *args), simulate(binary, *args)
    assert first == second
    assert first["delivered_fraction"] == 1 and first["duplicates_shown"] == 0
    other = simulate(binary, *args[:-1], "6")
    assert other["trace_sha256"] != first["trace_sha256"]


def test_bad_arguments_get_a_clear_error(binary):
    simulator = str(Path(binary).parent / "huddle-simulate")
    out = subprocess.run([simulator, "--loss", "2"], capture_output=True, text=True, timeout=30)
    assert out.returncode != 0
    assert "--loss must be between 0 and 0.9" in out.stderr
