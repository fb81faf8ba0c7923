"""Which `huddle` binary to drive: the one HUDDLE_BIN names, or the one SwiftPM built."""

import os
import subprocess
from pathlib import Path

from . import ROOT


def built_binary(configuration: str = "debug") -> str:
    """Where `swift build -c CONFIGURATION` puts huddle. SwiftPM is asked rather than the path
    guessed: it holds the target triple. Builds nothing."""
    out = subprocess.run(["swift", "build", "-c", configuration, "--show-bin-path"], cwd=ROOT,
                         capture_output=True, text=True, check=True, timeout=300).stdout.strip()
    return str(Path(out) / "huddle")


def huddle_binary() -> str:
    """HUDDLE_BIN, or the debug build Scripts/test made."""
    return os.environ.get("HUDDLE_BIN") or built_binary("debug")
