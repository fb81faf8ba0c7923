import pytest

from huddle_node import Node, huddle_binary


@pytest.fixture(scope="session")
def binary() -> str:
    return huddle_binary()


@pytest.fixture
def lan(tmp_path, binary):
    """Starts nodes and makes sure every one of them is stopped at the end of the test."""
    nodes: list[Node] = []

    def start(name: str, **kwargs) -> Node:
        node = Node(binary, name, tmp_path / name, **kwargs)
        nodes.append(node)
        return node

    yield start
    for node in nodes:
        if node.process.poll() is None:
            node.process.kill()
            node.process.wait()
