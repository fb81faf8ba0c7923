"""The Sunday test's network (bench part 21, sunday.py): the two-homes bed (huddletest.homes, NAT
mode) with more hosts on each home's bridge, a capture of every wire, and the stranger.

    home A: a1 alice  a2 anna  a3 pia's node  a4 pia's phone  a5 a stranger
    home B: b1 bob    b2 frank b3 quinn's node b4 quinn's phone

Every host is a namespace huddle-TAG-* of its own, so every byte between two processes crosses a
veth into the router namespace: a capture there (``tcpdump -i any``) sees every wire of the bed.

The stranger runs as its own process on a5 (``python3 -m huddletest.bench.sunday_wire stranger
UDP WEB SECONDS``): the amplification flood of the attack tests (bench attacks.py) at a node's UDP
port, and at a node's page server what test_web_attacks.py does (wrong pairing codes from one
address, and idle TCP connections), for SECONDS; it prints what it sent as one JSON line.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time

from ..homes import Homes

EXTRA = {"a3": ("A", "10.77.1.13"), "a4": ("A", "10.77.1.14"), "a5": ("A", "10.77.1.15"),
         "b3": ("B", "10.77.2.13"), "b4": ("B", "10.77.2.14")}


class SundayHomes(Homes):
    """huddletest.homes.Homes with the hosts of EXTRA too (same NAT rules: home B's are behind it)."""

    def address(self, host: str) -> str:
        return EXTRA[host][1] if host in EXTRA else super().address(host)

    def namespaces(self) -> list[str]:
        return [self.ns(host) for host in EXTRA] + super().namespaces()

    def up(self) -> "SundayHomes":
        super().up()
        for host, (home, address) in EXTRA.items():
            self.add_host(host, home, address)
        return self


def start_capture(bed: SundayHomes, path, leave_out: str | None = None) -> subprocess.Popen:
    """tcpdump on every interface of the router namespace (every veth of every host), whole
    packets, written as they come (-U), but for what goes to or from `leave_out` (the stranger's
    floods: tens of MB that hold nothing of a room). Stopped with SIGTERM (it flushes)."""
    bpf = ["not", "host", leave_out] if leave_out else []
    proc = subprocess.Popen(["ip", "netns", "exec", bed.router, "tcpdump", "-i", "any", "-U", "-s", "0", "-w",
                             str(path), *bpf], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"tcpdump exited {proc.returncode}: {proc.stderr.read()[-300:]}")
        try:
            if path.stat().st_size > 0:  # the pcap header: it is capturing
                return proc
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    return proc


def found_in(capture: bytes, needles: list[str]) -> dict[str, int]:
    """How many times each needle's UTF-8 bytes occur in the capture."""
    return {needle: capture.count(needle.encode()) for needle in needles if needle}


# ---------------------------------------------------------------------------------------------
# The stranger (run on a5)

def stranger(udp: str, web: str, seconds: float) -> dict:
    from ..webclient import Closed, PairingRefused, Phone
    from .attacks import AmplificationFlood

    stop = threading.Event()
    counts = {"guesses": 0, "guess_refused": 0, "idle_open": 0, "idle_refused": 0}
    flood = AmplificationFlood(udp, room="superbowl", copies=150, interval=0.01)
    flood.start()

    def guesses() -> None:
        while not stop.is_set():
            try:
                Phone(web).pair("ZZZZ-ZZZZ", name="stranger")
            except (Closed, PairingRefused, OSError, AssertionError, KeyError, ValueError):
                counts["guess_refused"] += 1
            counts["guesses"] += 1
            stop.wait(0.2)

    idle: list[socket.socket] = []

    def idlers() -> None:
        host, port = web.rsplit(":", 1)
        while not stop.is_set() and len(idle) < 300:
            try:
                idle.append(socket.create_connection((host, int(port)), timeout=2))
                counts["idle_open"] += 1
            except OSError:
                counts["idle_refused"] += 1
            stop.wait(0.02)
        stop.wait()

    threads = [threading.Thread(target=guesses, daemon=True), threading.Thread(target=idlers, daemon=True)]
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    flood.stop()
    for sock in idle:
        sock.close()
    for thread in threads:
        thread.join(5)
    counts["datagrams"] = flood.sent
    counts["datagram_bytes"] = flood.sent * len(flood.datagram(0))
    return counts


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "stranger":
        print(json.dumps(stranger(sys.argv[2], sys.argv[3], float(sys.argv[4]))), flush=True)
    else:
        sys.exit("usage: python3 -m huddletest.bench.sunday_wire stranger UDP_ADDR WEB_ADDR SECONDS")
