"""The QR code `huddle run --web` draws in the terminal is one a camera reads: the node's human
output, as a terminal shows it, is turned back into pixels (each character one module wide, two
tall: the half blocks), read by zbar (zbarimg, the barcode reader), and the link it holds pairs a
phone (huddletest.webclient) with the node it was drawn by."""

from __future__ import annotations

import shutil
import subprocess
import time

from huddletest.skips import cannot_run_here
from huddletest.webclient import Phone

# On a dark terminal the node draws the light modules (the quiet zone, the code's light cells).
DRAWN = {"█": (True, True), "▀": (True, False), "▄": (False, True), " ": (False, False)}
SCALE = 8


def read_human_output(binary: str, data_dir, until: str, timeout: float = 30) -> tuple[subprocess.Popen, list[str]]:
    process = subprocess.Popen(
        [binary, "run", "--name", "alice", "--no-mdns", "--data-dir", str(data_dir), "--port", "0",
         "--web", "--web-port", "0", "--no-console"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if until in line:
            return process, lines
    process.kill()
    raise AssertionError(f"no {until!r} within {timeout} s; saw {lines}")


def pixels(qr_lines: list[str]) -> list[list[int]]:
    """The drawing as a grey image: 0 dark, 255 light, SCALE pixels a module, with a white margin."""
    modules: list[list[bool]] = []
    for line in qr_lines:
        top, bottom = zip(*(DRAWN[c] for c in line))
        modules += [list(top), list(bottom)]
    width = len(modules[0])
    margin = [[True] * (width + 8) for _ in range(4)]
    modules = margin + [[True] * 4 + row + [True] * 4 for row in modules] + margin
    image = []
    for row in modules:
        scaled = [255 if light else 0 for light in row for _ in range(SCALE)]
        image += [scaled] * SCALE
    return image


def test_the_terminals_qr_code_is_read_by_a_camera_and_pairs(tmp_path, binary):
    if shutil.which("zbarimg") is None:
        cannot_run_here("needs zbarimg to read the QR code (Scripts/bootstrap --test installs zbar-tools)", "browser")
    process, lines = read_human_output(binary, tmp_path / "alice", until="type the code")
    try:
        qr = [line for line in lines if line and set(line) <= set(DRAWN)]
        assert len(qr) >= 12, lines
        said = lines[-1]
        page = said.split("open ", 1)[1].split(" and", 1)[0]
        code = said.rsplit(" ", 1)[1]

        image = pixels(qr)
        path = tmp_path / "qr.pgm"
        header = f"P5 {len(image[0])} {len(image)} 255\n".encode()
        path.write_bytes(header + bytes(value for row in image for value in row))
        read = subprocess.run(["zbarimg", "--raw", "-q", str(path)], capture_output=True, text=True, timeout=30)
        assert read.returncode == 0, read.stderr
        link = read.stdout.strip()
        assert link.startswith(page + "#pair="), (link, page)
        secret = link.split("#pair=", 1)[1]
        assert len(secret) == 26 and secret != code.replace("-", "")

        port = page.rstrip("/").rsplit(":", 1)[1]
        phone = Phone(f"127.0.0.1:{port}")
        paired = phone.pair(secret, name="camera")
        assert paired["name"] == "camera"
        phone.open()
        phone.wait_for(lambda m: m["t"] == "view", what="the view after pairing by the QR code")
        phone.close()
    finally:
        process.kill()
        process.wait()
