"""A simulated LAN (Scripts/lan) for the whole session: four hosts, each with its own avahi."""

import os

import pytest

from huddletest.binary import huddle_binary
from huddletest.lan import Bed
from huddletest.node import Node, kill_all


@pytest.fixture(scope="session")
def bed():
    """Our own bed (namespaces huddle-lt-*, unless HUDDLE_LAN_TAG names another), apart from any
    a developer has up, and one per xdist worker (huddle-ltgw0-*, …): two groups that use a bed
    run side by side, each on its own bridge."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    bed = Bed(os.environ.get("HUDDLE_LAN_TAG", "lt") + (worker or ""))
    up = bed.run("up", "4", "--force", check=False)
    if up.returncode != 0:
        pytest.fail(f"Scripts/lan up failed (exit {up.returncode}):\n{up.stderr}", pytrace=False)
    try:
        yield bed
    finally:
        bed.down()


@pytest.fixture
def hosts(bed, tmp_path):
    """Starts nodes on simulated hosts; stops them at the end of the test."""
    nodes: list[Node] = []
    binary = huddle_binary()

    def start(host: str, name: str, **kwargs) -> Node:
        kwargs.setdefault("mdns", True)
        node = Node(binary, name, tmp_path / name, launcher=bed.on_host(host), host_address=bed.address(host), **kwargs)
        nodes.append(node)
        return node

    yield start
    kill_all(nodes)
    for host in ("h1", "h2", "h3", "h4"):
        bed.run("restore", host, check=False)
        bed.run("loss", host, "0", check=False)
