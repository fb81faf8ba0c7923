"""A simulated LAN (Scripts/lan) for the whole session: four hosts, each with its own avahi."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "e2e"))

from huddle_node import Node, huddle_binary  # noqa: E402

LAN = str(ROOT / "Scripts" / "lan")
# Our own bed (namespaces huddle-lt-*), apart from any a developer has up; nodes started through
# `Scripts/lan exec` inherit the tag from this environment.
os.environ.setdefault("HUDDLE_LAN_TAG", "lt")
ENV = dict(os.environ)


def lan(*args: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([LAN, *args], env=ENV, check=check, capture_output=True, text=True, timeout=60, **kwargs)


@pytest.fixture(scope="session")
def bed():
    up = lan("up", "4", "--force", check=False)
    if up.returncode != 0:
        pytest.fail(f"Scripts/lan up failed (exit {up.returncode}):\n{up.stderr}", pytrace=False)
    try:
        yield lan
    finally:
        lan("down", check=False)


@pytest.fixture
def hosts(bed, tmp_path):
    """Starts nodes on simulated hosts; stops them at the end of the test."""
    nodes: list[Node] = []
    binary = huddle_binary()

    def start(host: str, name: str, **kwargs) -> Node:
        address = lan("addr", host).stdout.strip()
        node = Node(binary, name, tmp_path / name, mdns=True, launcher=[LAN, "exec", host],
                    host_address=address, **kwargs)
        node.host = host
        nodes.append(node)
        return node

    yield start
    for node in nodes:
        if node.process.poll() is None:
            node.process.kill()
            node.process.wait()
    for host in ("h1", "h2", "h3", "h4"):
        lan("restore", host, check=False)
        lan("loss", host, "0", check=False)
