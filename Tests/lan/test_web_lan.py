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

pytestmark = pytest.mark.xdist_group("lan")

# What the phone on h2 does: pair with the QR code's link, open a session, say one line, and wait
# for bob's answer; it prints what it saw as one JSON line.
PHONE = r"""
import json, sys
from huddletest.webclient import Phone
link = sys.argv[1]
address = link.split("//", 1)[1].split("/", 1)[0]
phone = Phone(address)
phone.pair(link.split("#pair=", 1)[1], name="phone-on-h2")
phone.open()
phone.wait_for(lambda m: m["t"] == "view", timeout=30, what="the view")
phone.send({"t": "line", "text": "from the phone on h2"})
answer = phone.line(lambda l: l.get("type") == "message" and l.get("text") == "to the phone", timeout=60,
                    what="bob's answer")
mine = phone.line(lambda l: l.get("type") == "message" and l.get("text") == "from the phone on h2", timeout=60,
                  what="its own line shown")
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
        alice.wait_for(lambda o: o["type"] == "info" and "phone-on-h2 is paired" in o["message"], timeout=60,
                       what="the phone paired")
        said = bob.message("from the phone on h2", timeout=60)
        assert said["nick"] == "alice", said
        bob.say("to the phone")
        out, err = phone.communicate(timeout=90)
        assert phone.returncode == 0, err
        seen = json.loads(out.strip().splitlines()[-1])
        assert seen["answer"]["nick"] == "bob" and seen["mine"]["nick"] == "alice", seen
    finally:
        for host in ("h1", "h2"):
            bed.run("loss", host, "0")
