"""The phone's page across the simulated LAN, as the couch has it: the node on h1 serves the page
(`--web`) at the address it prints, a phone on h2 (the doc's client, huddletest.webclient, run on
that host) opens that address from the QR code's link, pairs, and chats with a console viewer on
h3, while h1 and h2 drop 20 % of the packets they receive."""

import json
import os
import subprocess
import sys

import pytest

from huddletest import ROOT

# A group of its own, on a bed of its own (conftest.py): beside the two homes' group while
# test_lan.py's runs, rather than after it (Scripts/lan-test).
pytestmark = pytest.mark.xdist_group("lan-media")

# What the phone on h2 does: pair with the QR code's link, open a session, say one line, and wait
# for bob's answer; it prints what it saw as one JSON line. Like the page, it opens its session
# again when the connection is lost (a lossy link can outlast the node's 10 s to open one), and
# catches up from the last line it showed.
PHONE = r"""
import json, socket, sys, time
from huddletest.webclient import Closed, PairingRefused, Phone
link = sys.argv[1]
address = link.split("//", 1)[1].split("/", 1)[0]
phone = Phone(address)
for attempt in range(3):
    try:
        phone.pair(link.split("#pair=", 1)[1], name="phone-on-h2")
        break
    except (Closed, PairingRefused, OSError) as error:
        print(f"pairing: {error!r}", file=sys.stderr)
        phone.close()
else:
    sys.exit("could not pair")

def session():
    for attempt in range(8):
        try:
            phone.open()
            phone.wait_for(lambda m: m["t"] == "view", timeout=30, what="the view")
            return
        except (Closed, OSError, AssertionError) as error:
            print(f"opening: {error!r}", file=sys.stderr)
            phone.close()
            time.sleep(min(0.5 * 2 ** attempt, 5))
    sys.exit("could not open a session")

def said(text):
    return lambda line: line.get("type") == "message" and line.get("text") == text

session()
sent = False
deadline = time.monotonic() + 90
while True:
    try:
        if not sent:
            phone.send({"t": "line", "text": "from the phone on h2"})
            sent = True
        answer = phone.line(said("to the phone"), timeout=max(1, deadline - time.monotonic()), what="bob's answer")
        mine = phone.line(said("from the phone on h2"), timeout=max(1, deadline - time.monotonic()), what="its own line")
        break
    except (Closed, OSError) as error:
        print(f"session: {error!r}", file=sys.stderr)
        phone.close()
        session()
print(json.dumps({"answer": answer, "mine": mine}))
"""


def test_a_phone_on_another_host_pairs_and_chats_over_a_lossy_lan(hosts, bed):
    alice = hosts("h1", "alice", extra=["--web", "--web-port", "0"])
    bob = hosts("h3", "bob")
    bob.wait_for(lambda o: o["type"] == "join" and o["nick"] == "alice", timeout=20, what="alice over mDNS")
    web = alice.wait_for(lambda o: o["type"] == "web", what="the page's address")
    # The address printed is the one the LAN reaches h1 at, not loopback.
    assert web["url"].startswith(f"http://{bed.address('h1')}:"), web
    for host in ("h1", "h2"):
        bed.run("loss", host, "20")
    try:
        phone = subprocess.Popen(
            [*bed.on_host("h2", PYTHONPATH=str(ROOT / "Tests")), sys.executable, "-c", PHONE, web["pair_url"]],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            said = bob.message("from the phone on h2", timeout=90)
        except AssertionError:
            phone.kill()
            raise AssertionError(f"the phone's line never reached bob; the phone said: {phone.communicate()[1][-2000:]}")
        assert said["nick"] == "alice", said
        alice.wait_for(lambda o: o["type"] == "info" and "phone-on-h2 is paired" in o["message"], what="the pairing")
        bob.say("to the phone")
        out, err = phone.communicate(timeout=120)
        assert phone.returncode == 0, err
        seen = json.loads(out.strip().splitlines()[-1])
        assert seen["answer"]["nick"] == "bob" and seen["mine"]["nick"] == "alice", seen
    finally:
        for host in ("h1", "h2"):
            bed.run("loss", host, "0")
