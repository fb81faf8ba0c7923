"""A test that cannot run on this machine (a tool or a privilege missing) fails, with a line naming
what to install, unless the run said it may be skipped: `Scripts/test --without sound` (or
`capture`, `lan`, `browser`) sets HUDDLE_TEST_WITHOUT, and then the test is skipped and the pytest
summary names it and why (pytest.ini: -rs). The same rule with or without CI: a green run never
hides a suite that did not run unless the person asked for that."""

from __future__ import annotations

import os

import pytest

#: What a run may be told to do without, and what each needs.
WITHOUTS = {
    "sound": "espeak-ng, sox and pulseaudio (the test audio, listening)",
    "capture": "tcpdump and root (packet captures)",
    "lan": "root and network namespaces, avahi-daemon and dbus (the simulated LAN)",
    "browser": "chromium, chromium-driver, selenium and zbar-tools (the phone's web page, huddletest.browser, its QR code)",
}


def allowed_without() -> set[str]:
    """What this run may skip: HUDDLE_TEST_WITHOUT, comma-separated."""
    return {part.strip() for part in os.environ.get("HUDDLE_TEST_WITHOUT", "").split(",") if part.strip()}


def cannot_run_here(reason: str, without: str) -> None:
    """Fails the calling test with `reason`, or skips it if the run allowed going `without` it.
    The line names the test (pytest would name this file)."""
    assert without in WITHOUTS, without
    test = os.environ.get("PYTEST_CURRENT_TEST", "this test").rsplit(" (", 1)[0]
    if without in allowed_without():
        pytest.skip(f"{test}: {reason} (skipped: --without {without})")
    pytest.fail(f"{test} cannot run here: {reason}. Install it, or run Scripts/test --without {without} "
                f"to skip these knowingly", pytrace=False)
