"""A test that cannot run on this machine (a tool or a privilege missing) says so: elsewhere it
is skipped, and the pytest summary names it and why (pytest.ini: -rs); on CI (CI=true) it fails,
since a skip there would hide a failure nobody sees."""

from __future__ import annotations

import os

import pytest


def cannot_run_here(reason: str) -> None:
    """Skips the calling test with `reason`, or fails it on CI. The line names the test (pytest
    would name this file)."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "this test").rsplit(" (", 1)[0]
    if os.environ.get("CI") == "true":
        pytest.fail(f"{test} cannot run on CI, where it must: {reason}", pytrace=False)
    pytest.skip(f"{test}: {reason}")
