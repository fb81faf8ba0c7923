"""What the end-to-end tests (Tests/e2e), the LAN tests (Tests/lan), Scripts/bench and
Scripts/demo share: real `huddle` processes driven from Python, a terminal to type into, and
the simulated LAN of Scripts/lan.

Tests/ is its import root: pytest puts it on the path from pytest.ini (`pythonpath`),
and Scripts/bench and Scripts/demo put it on PYTHONPATH, then run `python3 -m huddletest.bench`
or `python3 -m huddletest.demo`.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository: SwiftPM's package, and Scripts/
