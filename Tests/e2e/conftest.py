import pytest

from huddletest.binary import huddle_binary
from huddletest.node import Node, kill_all


@pytest.fixture(scope="session")
def binary() -> str:
    return huddle_binary()


@pytest.fixture
def lan(tmp_path, binary):
    """Starts nodes and makes sure every one of them is stopped at the end of the test."""
    nodes: list[Node] = []

    def start(name: str, data_name: str | None = None, **kwargs) -> Node:
        """`data_name` names the data dir (default: the nick): another one is another key.
        `shield=None` starts the node with the product's shield (no flag, 90 s); by default it
        runs with `--shield off` (huddletest.node.TEST_SHIELD says why)."""
        node = Node(binary, name, tmp_path / (data_name or name), **kwargs)
        nodes.append(node)
        return node

    yield start
    kill_all(nodes)
